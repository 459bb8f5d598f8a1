// tessera/array/io/mapped_file.hpp — a file mapped into memory, owned RAII-style.
//
// Arrays larger than memory live in files that the kernel pages in on demand.
// MappedFile maps a whole file read-only or read-write and unmaps it when the
// last owner lets go; `region()` hands out a Buffer over part of it that keeps
// the mapping alive, so NDArray views of a .npy or zarr chunk outlive the code
// that opened the file. `create` reserves the file's blocks with
// posix_fallocate before anything is written, so a full disk is a StorageError
// at creation rather than a SIGBUS in the middle of a store. Every failure is a
// StorageError naming the path and the errno text.
//
// @code
//   using namespace tessera::array;
//   auto file = MappedFile::create("out.bin", 1 << 20);        // 1 MiB, read-write
//   Buffer b = file->region(4096, 8192);                      // keeps `file` mapped
//   file->advise(Advice::Sequential);
//   file->sync();                                             // msync: on disk now
//   auto in = MappedFile::open("out.bin");                    // read-only
// @endcode
//
// Thread-safety: a MappedFile may be shared between threads; the bytes are
// plain memory, and writes to the same bytes must be ordered by the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/array/core/ndarray.hpp"

namespace tessera::array {

//! How the file will be read, passed to madvise.
enum class Advice { Normal, Sequential, Random, WillNeed, DontNeed };

//! Access to a mapped file.
enum class Access { ReadOnly, ReadWrite };

//! A memory-mapped file (RAII): unmapped when the last holder lets go.
class MappedFile : public std::enable_shared_from_this<MappedFile> {
 public:
  //! Maps all of an existing file. Throws StorageError when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path, Access access = Access::ReadOnly);
  //! Creates (or truncates) `path` with `size` bytes, reserved with posix_fallocate
  //! (StorageError when the disk is full), and maps it read-write. The bytes are zero.
  static std::shared_ptr<MappedFile> create(const std::string& path, size_t size);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  //! The file's path as opened.
  const std::string& path() const { return path_; }
  //! The file's size in bytes (the mapped length).
  size_t size() const { return size_; }
  //! True when mapped for writing.
  bool writable() const { return access_ == Access::ReadWrite; }
  //! The first mapped byte (a valid non-null pointer even for an empty file).
  std::byte* data() const { return data_; }

  //! `length` bytes from `offset` as a Buffer that keeps this mapping alive; read-only
  //! unless the file was mapped read-write. When the Buffer's last copy goes, the
  //! region's pages leave the process's resident memory (madvise DONTNEED; the bytes
  //! stay in the file and the page cache), so reading a file larger than memory
  //! region by region keeps only the regions in use resident. StorageError when the
  //! range is outside the file.
  Buffer region(size_t offset, size_t length);
  //! Tells the kernel how the bytes [offset, offset + length) will be used (all of
  //! them by default). A failed hint is ignored: hints never change results.
  void advise(Advice advice, size_t offset = 0, size_t length = SIZE_MAX) const;
  //! Writes dirty pages back to the file (msync); StorageError on failure.
  void sync() const;

 private:
  struct Token {};

 public:
  //! For the factories only (Token is private); use open or create.
  MappedFile(Token, std::string path, std::byte* data, size_t size, Access access);

 private:
  std::string path_;
  std::byte* data_;
  size_t size_;
  Access access_;
  bool mapped_;
};

}  // namespace tessera::array
