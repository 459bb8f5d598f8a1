import tessera


def test_memory_limit_error_is_a_memory_error() -> None:
    assert issubclass(tessera.MemoryLimitError, MemoryError)
