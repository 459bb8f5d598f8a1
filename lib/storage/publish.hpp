// How tessera writes every output (zarr stores, .npy files, traces, CSV/SVG):
// one write discipline, in one place.
//
// An output is made under a temporary name in its destination's folder,
// `.<name>.tessera-tmp-<owner>-<random>`, synced to the disk, and published by
// one atomic rename. Replacing an output swaps the new one in with
// renameat2(RENAME_EXCHANGE) and only then removes the old one (now under the
// temporary name); where the file system cannot exchange, the old output is
// first renamed aside to `.<name>.tessera-old-<owner>-<random>`. So at every
// instant the final name holds the complete old output or the complete new
// one, whatever kills the process.
//
// tessera replaces only what it recognises as its own kind of output: a zarr
// array directory (.zarray or zarr.json plus chunk files, nothing else) or a
// .npy file or an HDF5 file; never the working directory, a folder holding a protected path
// (the source of a rechunk), a symbolic link, or anything else. Refusals name
// what was found.
//
// Temporaries of a process that is gone are recognised by their name and
// cleaned by the next write to the same destination (clean_stale). The owner
// field names the process, its host, boot and PID namespace (owner.hpp), so a
// live write of another host or container on a shared file system is never
// taken for a leftover.
//
// @code
//   storage::publish("out.npy", {.kind = storage::Kind::npy, .overwrite = true},
//                    [&](const std::string& tmp) { write_npy(tmp); });
// @endcode
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <absl/functional/function_ref.h>

namespace tessera::storage {

//! What an output is, hence what an existing one must be to be replaced.
enum class Kind {
  npy,   //!< a .npy file (starts with "\x93NUMPY")
  zarr,  //!< a zarr array directory (v2 or v3)
  hdf5,  //!< an HDF5 (or NetCDF-4) file (starts with "\x89HDF\r\n\x1a\n")
  file,  //!< a regular file tessera writes whole (traces, CSV, SVG, store metadata)
};

struct PublishOptions {
  Kind kind = Kind::file;
  //! Replace an existing output of `kind` (otherwise StorageError when one exists).
  bool overwrite = false;
  //! Paths the output must neither be nor hold (e.g. a rechunk's source).
  std::vector<std::string> protect = {};
};

//! The marker in every temporary's name: `.<name>.tessera-tmp-<owner>-<random>`.
inline constexpr std::string_view kTemporaryMarker = ".tessera-tmp-";

//! A fresh temporary path for `path`, in its folder, unique across processes
//! and threads.
std::string temporary_path(const std::string& path);

//! StorageError unless `path` may be written under `options`: absent, or (with
//! overwrite) an output of options.kind that is not the working directory nor
//! holds it or a protected path. The message names what was found.
void check_target(const std::string& path, const PublishOptions& options);

//! Cleans what killed runs left next to `path`: removes their temporaries, and
//! puts back an old output a run had renamed aside when `path` is missing (or
//! removes it when `path` holds the new one). Entries whose owner is not known
//! to be gone (owner.hpp: running here, or made on another host) are left alone. Returns one line per entry handled,
//! for a message.
std::vector<std::string> clean_stale(const std::string& path);

//! Writes an output: check_target, clean_stale, `write(tmp)` at a temporary
//! path, sync, then publish it at `path` (see the file comment). On any error
//! (also Cancelled) the temporary is removed and `path` is left as it was.
void publish(const std::string& path, const PublishOptions& options,
             absl::FunctionRef<void(const std::string& tmp)> write);

//! Syncs an output being written to the disk, as publish does before its
//! rename: a file by fsync, a folder by one syncfs of its file system. For a
//! writer beside publish's own (another rank writing part of the temporary).
void sync_output(const std::string& path);

//! StorageError unless publish_bytes could write `path` now: check_target for a
//! regular file, then a temporary made and removed in its folder, so that a
//! missing or read-only folder or file system is found before the work whose
//! output it is (a run's report), not after.
void check_writable(const std::string& path);

//! publish of a regular file holding `bytes` (Kind::file, replacing any regular
//! file at `path`).
void publish_bytes(const std::string& path, std::string_view bytes);

}  // namespace tessera::storage
