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
// read-only and the returned pointer keeps the mapping alive, so a block that
// comes back is the file's pages (tessera::array::NDArray does this; the writer's
// `align` puts the bytes where a mapping can start). std::string and vectors of
// trivially copyable elements are spillable here already.
//
// @code
//   struct Histogram { std::vector<uint64_t> bins; size_t nbytes() const { return bins.size() * 8; } };
//   template <> struct tessera::Spillable<Histogram> {
//     static void serialize(const Histogram& h, tessera::SpillWriter& w) { tessera::Spillable<std::vector<uint64_t>>::serialize(h.bins, w); }
//     static Histogram deserialize(tessera::SpillReader& r) { return {tessera::Spillable<std::vector<uint64_t>>::deserialize(r)}; }
//   };
// @endcode
//
// The specialization must be visible wherever a Value of the type is made.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera {

//! Appends bytes to one spilled value's file. Throws StorageError when the
//! disk refuses them.
class SpillWriter {
 public:
  virtual void write(const void* data, size_t size) = 0;
  //! Pads so that the next byte lands at a multiple of `alignment` (a power of
  //! two, at most the page size) from the start: where SpillReader::map can map it.
  virtual void align(size_t alignment) = 0;
  //! Writes one trivially copyable object.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void put(const T& v) {
    write(&v, sizeof(T));
  }

 protected:
  ~SpillWriter() = default;
};

//! Reads back what a SpillWriter wrote, in the same order. Throws StorageError
//! when the file is shorter than what is asked.
class SpillReader {
 public:
  virtual void read(void* data, size_t size) = 0;
  //! Skips what SpillWriter::align padded.
  virtual void align(size_t alignment) = 0;
  //! The next `size` bytes in place (read-only, not copied); the pointer keeps
  //! the mapping alive.
  virtual std::shared_ptr<const std::byte> map(size_t size) = 0;
  //! Reads one trivially copyable object.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    T v;
    read(&v, sizeof(T));
    return v;
  }

 protected:
  ~SpillReader() = default;
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

template <>
struct Spillable<std::string> {
  static void serialize(const std::string& s, SpillWriter& w) {
    w.put<uint64_t>(s.size());
    w.write(s.data(), s.size());
  }
  static std::string deserialize(SpillReader& r) {
    std::string s(r.get<uint64_t>(), '\0');
    r.read(s.data(), s.size());
    return s;
  }
};

template <class T>
  requires std::is_trivially_copyable_v<T> && std::default_initializable<T>
struct Spillable<std::vector<T>> {
  static void serialize(const std::vector<T>& v, SpillWriter& w) {
    w.put<uint64_t>(v.size());
    w.write(v.data(), v.size() * sizeof(T));
  }
  static std::vector<T> deserialize(SpillReader& r) {
    std::vector<T> v(r.get<uint64_t>());
    r.read(v.data(), v.size() * sizeof(T));
    return v;
  }
};

}  // namespace tessera
