# Type stubs of the package tessera (PEP 561; py.typed marks the package as typed).
# The names and signatures are those of __init__.py, _get.py, _dask.py and the
# extension tessera._tessera; mypy --strict checks python/tests and python/examples
# against them (scripts/test).
import builtins
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Literal, TypedDict, Union

from . import array as array

__version__: str
__all__: list[str]

_Path = Union[str, os.PathLike[str]]
_Bytes = Union[int, str]
_Graph = Any  # a dict key -> task, a HighLevelGraph or a dask collection
_ChunkEntry = Union[int, Literal["auto", "keep"], None]

class Error(builtins.RuntimeError): ...
class ChunkError(Error, builtins.ValueError): ...
class StorageError(Error): ...
class InvalidTypeError(Error, builtins.TypeError): ...
class InvalidValueError(Error, builtins.ValueError): ...
class Cancelled(Error): ...
class TaskError(Error): ...
class MemoryLimitError(Error, builtins.MemoryError): ...

# The former names of InvalidTypeError and InvalidValueError (not in __all__).
TypeError = InvalidTypeError
ValueError = InvalidValueError

def get(
    dsk: _Graph,
    keys: Any,
    num_workers: int | None = ...,
    memory_limit: _Bytes | None = ...,
    spill_dir: _Path | None = ...,
    callbacks: Any = ...,
    cache: Mapping[Hashable, Any] | None = ...,
    rerun_exceptions_locally: bool | None = ...,
    raise_exception: Callable[..., Any] | None = ...,
    progress: bool = ...,
    trace: _Path | None = ...,
    report: _Path | None = ...,
    **kwargs: Any,
) -> Any: ...
def order(dsk: _Graph) -> dict[Hashable, int]: ...
def cull(dsk: _Graph, keys: Any) -> tuple[dict[Hashable, Any], dict[Hashable, set[Hashable]]]: ...
def fuse(dsk: _Graph, keys: Any = ..., dependencies: Any = ...) -> tuple[dict[Hashable, Any],
                                                                         dict[Hashable, set[Hashable]]]: ...
def register(name: str = ...) -> None: ...

class RechunkResult(TypedDict):
    chunks: tuple[tuple[int, ...], ...]
    direct: bool

def rechunk(
    source: _Path,
    target: _Path,
    chunks: Sequence[_ChunkEntry] | Mapping[int, _ChunkEntry],
    max_mem: _Bytes = ...,
    method: Literal["auto", "tasks", "shuffle"] = ...,
    codec: str | None = ...,
    zarr_format: int | None = ...,
    shard: Sequence[_ChunkEntry] | Mapping[int, _ChunkEntry] | None = ...,
    overwrite: bool = ...,
    progress: bool = ...,
    num_workers: int | None = ...,
    scratch: _Path | None = ...,
) -> RechunkResult: ...
