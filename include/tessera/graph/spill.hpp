// tessera/graph/spill.hpp — how a result goes to disk and comes back: Spillable.
//
// When a run has a memory limit (GetOptions::memory_limit) and holds more than
// it, the scheduler moves held results to a scratch file and brings each back
// just before a task reads it. A type takes part by specializing `Spillable`
// with `serialize` (write the object to a SpillWriter) and `deserialize` (make
// it again from a SpillReader); a Value records at creation whether its type has
// such a form, as it records its size. Values of other types are never spilled:
// they stay in memory and count against the limit.
//
// A reader can `map` bytes instead of copying them: the scratch file is mapped
// copy-on-write and the returned pointer keeps the mapping alive, so a block that
// comes back is the file's pages (tessera::array::NDArray does this; the writer's
// `align` puts the bytes where a mapping can start). std::string and vectors of
// trivially copyable or spillable elements are spillable here already.
//
// The same form carries a Value to another process of the program
// (tessera/graph/wire.hpp): a type that can spill can also travel.
//
// @code
//   struct Histogram { std::vector<uint64_t> bins; size_t nbytes() const { return bins.size() * 8; } };
//   template <> struct tessera::Spillable<Histogram> {
//     using Bins = tessera::Spillable<std::vector<uint64_t>>;
//     static void serialize(const Histogram& h, tessera::SpillWriter& w) { Bins::serialize(h.bins, w); }
//     static Histogram deserialize(tessera::SpillReader& r) { return {Bins::deserialize(r)}; }
//   };
// @endcode
//
// The specialization must be visible wherever a Value of the type is made.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera {

//! Appends bytes to one spilled value's file. Throws StorageError when the
//! disk refuses them.
class SpillWriter {
 public:
  //! Appends `size` bytes from `data`.
  virtual void write(const void* data, size_t size) = 0;
  //! Pads so that the next byte lands at a multiple of `alignment` (a power of
  //! two, at most the page size) from the start: where SpillReader::map can map it.
  virtual void align(size_t alignment) = 0;
  //! Appends `size` bytes at `data`, which stay unchanged while `data` (or a
  //! copy of it) lives: a writer may keep the pointer instead of copying the
  //! bytes (PartsWriter: an array sent to another process from its own buffer).
  //! The default copies them (write).
  virtual void write_shared(std::shared_ptr<const std::byte> data, size_t size) { write(data.get(), size); }
  //! Writes one trivially copyable object.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void put(const T& v) {
    write(&v, sizeof(T));
  }

 protected:
  ~SpillWriter() = default;
};

//! Bytes held by whoever shares `data`: a part of a message (PartsWriter,
//! Communicator::send_parts).
struct SharedBytes {
  std::shared_ptr<const std::byte> data;  //!< the first byte; keeps the bytes alive
  size_t size = 0;                        //!< how many

  //! The bytes, viewed.
  std::span<const std::byte> span() const { return {data.get(), size}; }
  //! Takes `bytes` over, without a copy.
  static SharedBytes from(std::vector<std::byte> bytes) {
    auto owner = std::make_shared<std::vector<std::byte>>(std::move(bytes));
    return {std::shared_ptr<const std::byte>(owner, owner->data()), owner->size()};
  }
};

//! Reads back what a SpillWriter wrote, in the same order. Throws StorageError
//! when the file is shorter than what is asked.
class SpillReader {
 public:
  //! Reads `size` bytes into `data`.
  virtual void read(void* data, size_t size) = 0;
  //! Skips what SpillWriter::align padded.
  virtual void align(size_t alignment) = 0;
  //! The next `size` bytes in place (not copied, the reader's own: a spilled file is mapped copy-on-write, so
  //! the object made of them may write to them); the pointer keeps the mapping alive.
  virtual std::shared_ptr<const std::byte> map(size_t size) = 0;
  //! How many bytes are left to read.
  virtual size_t remaining() const = 0;
  //! Reads one trivially copyable object.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    T v;
    read(&v, sizeof(T));
    return v;
  }
  //! Throws tessera::Error unless `count` items of `item_size` bytes can still be
  //! read: a deserialize checks a count it read before it allocates for it.
  void expect(uint64_t count, size_t item_size) const;

 protected:
  ~SpillReader() = default;
};

//! A SpillWriter into memory (a Value on its way to another process:
//! tessera/graph/wire.hpp). `align` pads from the first byte written.
class BytesWriter final : public SpillWriter {
 public:
  //! Appends `size` bytes from `data`.
  void write(const void* data, size_t size) override;
  void align(size_t alignment) override;
  //! What was written.
  std::vector<std::byte>& bytes() { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

//! A SpillWriter into memory that keeps the large runs given to write_shared
//! as they are, without copying them: what it wrote is its parts one after
//! another (a message that goes to another process without being gathered
//! into one buffer first: Communicator::send_parts). `align` pads from the
//! first byte written, as BytesWriter's does.
//! @code
//!   tessera::PartsWriter w;
//!   tessera::to_wire(value, w);          // an NDArray's elements stay in its buffer
//!   comm.send_parts(1, /*tag=*/3, w.parts());
//! @endcode
class PartsWriter final : public SpillWriter {
 public:
  //! Shared runs shorter than this are copied: a part of their own costs more than the copy.
  static constexpr size_t kMinShared = size_t{64} << 10;
  //! Appends `size` bytes from `data` (copied).
  void write(const void* data, size_t size) override;
  void align(size_t alignment) override;
  //! Appends the bytes at `data` as a part of their own (kept, not copied) from kMinShared bytes.
  void write_shared(std::shared_ptr<const std::byte> data, size_t size) override;
  //! What was written, in order.
  const std::vector<SharedBytes>& parts();
  //! Bytes written.
  size_t size() const { return size_; }

 private:
  // The copied bytes since the last shared part, not yet a part.
  std::shared_ptr<std::vector<std::byte>> open_;
  std::vector<SharedBytes> parts_;
  size_t size_ = 0;
  std::vector<std::byte>& open_part();  // the part being written, begun if none is
  void close();
};

//! A SpillReader over bytes in memory: a spilled file mapped whole, a message
//! from another process. `map` hands out pieces of them, not copies, each
//! keeping `data` alive; `align` skips from `data`'s first byte. Errors say
//! `what` the bytes are ("a spilled result at PATH", "a message from rank 2").
class BytesReader final : public SpillReader {
 public:
  //! Over `size` bytes at `data`; `what` names them in errors.
  BytesReader(std::shared_ptr<const std::byte> data, size_t size, std::string what);
  //! Reads `size` bytes into `data`.
  void read(void* data, size_t size) override;
  void align(size_t alignment) override;
  std::shared_ptr<const std::byte> map(size_t size) override;
  size_t remaining() const override { return size_ - pos_; }

 private:
  const std::byte* take(size_t n);
  std::shared_ptr<const std::byte> data_;
  size_t size_;
  size_t pos_ = 0;
  std::string what_;
};

//! Specialize with `static void serialize(const T&, SpillWriter&)` and
//! `static T deserialize(SpillReader&)` to let results of type T spill.
template <class T>
struct Spillable {};

//! True when T has a Spillable form.
template <class T>
concept spillable = requires(const T& v, SpillWriter& w, SpillReader& r) {
  Spillable<T>::serialize(v, w);
  { Spillable<T>::deserialize(r) } -> std::same_as<T>;
};

//! Strings spill as their length and their bytes.
template <>
struct Spillable<std::string> {
  //! Writes the length and the bytes.
  static void serialize(const std::string& s, SpillWriter& w) {
    w.put<uint64_t>(s.size());
    w.write(s.data(), s.size());
  }
  //! Reads back what serialize wrote.
  static std::string deserialize(SpillReader& r) {
    const auto n = r.get<uint64_t>();
    r.expect(n, 1);
    std::string s(n, '\0');
    r.read(s.data(), s.size());
    return s;
  }
};

template <class T>
  requires std::is_trivially_copyable_v<T> && std::default_initializable<T>
struct Spillable<std::vector<T>> {
  //! Writes the length and the elements' bytes.
  static void serialize(const std::vector<T>& v, SpillWriter& w) {
    w.put<uint64_t>(v.size());
    w.write(v.data(), v.size() * sizeof(T));
  }
  //! Reads back what serialize wrote.
  static std::vector<T> deserialize(SpillReader& r) {
    const auto n = r.get<uint64_t>();
    r.expect(n, sizeof(T));
    std::vector<T> v(n);
    r.read(v.data(), v.size() * sizeof(T));
    return v;
  }
};

//! Vectors of other spillable types (strings, arrays): one element after another.
template <class T>
  requires(!std::is_trivially_copyable_v<T> && spillable<T>)
struct Spillable<std::vector<T>> {
  //! Writes the length and each element.
  static void serialize(const std::vector<T>& v, SpillWriter& w) {
    w.put<uint64_t>(v.size());
    for (const T& x : v) Spillable<T>::serialize(x, w);
  }
  //! Reads back what serialize wrote.
  static std::vector<T> deserialize(SpillReader& r) {
    const auto n = r.get<uint64_t>();
    r.expect(n, 1);  // every element takes a byte at least
    std::vector<T> v;
    v.reserve(n);
    for (uint64_t i = 0; i < n; ++i) v.push_back(Spillable<T>::deserialize(r));
    return v;
  }
};

}  // namespace tessera
