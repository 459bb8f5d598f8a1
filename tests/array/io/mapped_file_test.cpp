#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "array/support.hpp"
#include "tessera/array/io/mapped_file.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using namespace tessera::array::testing;

TEST_CASE("mapped files: create reserves and zeroes, regions keep the mapping alive") {
  TempDir dir;
  Buffer tail;
  {
    auto f = MappedFile::create(dir / "f.bin", 10000);
    CHECK(f->size() == 10000);
    CHECK(f->writable());
    CHECK(f->data()[9999] == std::byte{0});
    std::memcpy(f->data() + 4096, "tessera", 7);
    f->advise(Advice::Sequential);
    f->advise(Advice::WillNeed, 5000, 100);
    f->sync();
    tail = f->region(4096, 7);
  }
  CHECK(std::memcmp(tail.data(), "tessera", 7) == 0);  // the MappedFile handle is gone, the mapping is not
  auto r = MappedFile::open(dir / "f.bin");
  CHECK(!r->writable());
  CHECK(!r->region(0, 10).writable());
  CHECK(std::memcmp(r->data() + 4096, "tessera", 7) == 0);
  REQUIRE_THROWS_WITH_AS(r->region(9990, 11), doctest::Contains("expected 11 bytes at offset 9990, but the file has 10000"),
                         StorageError);
  auto empty = MappedFile::create(dir / "empty.bin", 0);
  CHECK(empty->data() != nullptr);
  CHECK(MappedFile::open(dir / "empty.bin")->size() == 0);
}

TEST_CASE("mapped files: errors name the path and the errno text") {
  TempDir dir;
  const std::string expected = (dir / "nope") + ": cannot open: No such file or directory";
  REQUIRE_THROWS_WITH_AS(MappedFile::open(dir / "nope"), expected.c_str(), StorageError);
  REQUIRE_THROWS_WITH_AS(MappedFile::create(dir / "no/such/dir/f", 10), doctest::Contains("cannot create: No such file"),
                         StorageError);
  // More than any disk holds: posix_fallocate fails up front (ENOSPC or EFBIG), no SIGBUS later.
  REQUIRE_THROWS_WITH_AS(MappedFile::create(dir / "huge", size_t{1} << 60), doctest::Contains("cannot reserve"),
                         StorageError);
  CHECK(!std::filesystem::exists(dir / "huge"));
  try {
    MappedFile::open(dir / "nope");
  } catch (const StorageError& e) {
    CHECK(e.path() == dir / "nope");
    CHECK(e.error_code() == ENOENT);
  }
}

TEST_CASE("a mapped file truncated under a copy is a StorageError naming it, on every thread, not a SIGBUS") {
  TempDir dir;
  constexpr size_t kBytes = 8 << 20;
  std::vector<std::string> paths;
  std::vector<NDArray> views;
  for (int i = 0; i < 4; ++i) {
    paths.push_back(dir / ("src" + std::to_string(i) + ".bin"));
    auto f = MappedFile::create(paths.back(), kBytes);
    std::memset(f->data(), 1, kBytes);
    auto file = MappedFile::open(paths.back());
    views.emplace_back(file->region(0, kBytes), DType::uint8(), Shape{static_cast<int64_t>(kBytes)},
                       Strides{1}, 0);
    std::filesystem::resize_file(paths.back(), 4096);  // another program truncates it
  }
  // Contiguous and strided copies, in four threads at once.
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      try {
        if (i % 2 == 0) {
          (void)views[i].copy();
        } else {
          (void)views[i].slice({Slice{std::nullopt, std::nullopt, 2}}).copy();
        }
      } catch (const StorageError& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(errors[i].find(paths[i] + ": the file became shorter (or unreadable) while tessera was reading it") == 0);
  }
  // Copies of intact mappings still work after a guarded fault.
  auto ok = MappedFile::create(dir / "ok.bin", 4096);
  std::memset(ok->data(), 7, 4096);
  CHECK(NDArray(ok->region(0, 4096), DType::uint8(), Shape{4096}, Strides{1}, 0).copy().at<uint8_t>({4095}) == 7);
}

namespace {

// Resident bytes of the mapping that holds `address`, from /proc/self/smaps.
size_t resident_bytes(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoul(line.substr(4)) * 1024;  // "Rss:   123 kB"
    }
  }
  FAIL("no mapping holds the address");
  return 0;
}

}  // namespace

TEST_CASE("mapped files: a region's pages leave resident memory with its last view, and its bytes stay") {
  TempDir dir;
  constexpr size_t kSize = size_t{16} << 20;
  {
    auto w = MappedFile::create(dir / "big.bin", kSize);
    Buffer all = w->region(0, kSize);
    for (size_t i = 0; i < kSize; i += 4096) all.data()[i] = std::byte{static_cast<unsigned char>(i >> 12)};
    all = Buffer();  // dirty pages of a shared mapping: dropped from the process, kept by the file
    CHECK(resident_bytes(w->data()) < kSize / 4);
  }
  auto f = MappedFile::open(dir / "big.bin");
  Buffer half = f->region(0, kSize / 2);
  unsigned sum = 0;
  for (size_t i = 0; i < kSize / 2; i += 4096) sum += static_cast<unsigned>(half.data()[i]);
  CHECK(sum > 0);
  CHECK(resident_bytes(f->data()) >= kSize / 2);
  half = Buffer();
  CHECK(resident_bytes(f->data()) < kSize / 8);
  for (size_t i = 0; i < kSize; i += 4096) {  // every byte written above is still there
    if (f->data()[i] != std::byte{static_cast<unsigned char>(i >> 12)}) FAIL("byte " << i << " changed");
  }
}
