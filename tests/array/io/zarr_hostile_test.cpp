// zarr stores crafted to hang a reader or to exhaust its memory (issue 25):
// metadata that is a FIFO, a device, a folder, too big or too deep; chunk and
// shard files that are FIFOs or far bigger than any codec makes; groups that
// hold symbolic links to themselves. Each is refused at once with a message
// naming the file; what is valid but unusual (chains of compressors) reads.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "array/support.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/graph/error.hpp"

// A named namespace: scripts/test compiles a suite as one file, where another
// test file's helpers of the same name would clash.
namespace zarr_hostile_test {

using namespace tessera;
using namespace tessera::array;
using namespace tessera::array::testing;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A FIFO at `path`, and a guard that, should a reader block on it (the bug
// these tests catch), opens it for writing after a few seconds so that the
// reader wakes up and the test fails instead of hanging.
class Fifo {
 public:
  explicit Fifo(const std::string& path) : path_(path) {
    std::error_code ec;
    fs::remove_all(path, ec);
    REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    guard_ = std::thread([this] {
      for (int i = 0; !done_.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (i < 300) continue;
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);  // ENXIO while nobody reads
        if (fd >= 0) ::close(fd);
      }
    });
  }
  ~Fifo() {
    done_.store(true);
    guard_.join();
  }

 private:
  std::string path_;
  std::atomic<bool> done_{false};
  std::thread guard_;
};

// Makes `path` a sparse file of `size` bytes that begins with `head` and ends with `tail`.
void write_sparse(const std::string& path, const std::string& head, size_t size, const std::string& tail = "") {
  write_bytes(path, head);
  fs::resize_file(path, size - tail.size());
  std::ofstream(path, std::ios::binary | std::ios::app) << tail;
  REQUIRE(fs::file_size(path) == size);
}

const char* const kV2Array =
    R"({"zarr_format": 2, "shape": [8], "chunks": [4], "dtype": "<i4", "order": "C", "fill_value": 0,
        "compressor": null, "filters": null)";

}  // namespace

TEST_CASE("zarr: metadata that is a FIFO, a folder or a device is refused at once, naming what it is") {
  TempDir dir;
  const auto refused = [&](const std::string& name, const std::string& file, const std::string& kind) {
    CAPTURE(name);
    REQUIRE_THROWS_WITH_AS(zarr::open(dir / name),
                           doctest::Contains((dir / (name + "/" + file) + ": expected a regular file, found " + kind).c_str()),
                           StorageError);
  };
  fs::create_directories(dir / "fifo2");
  {
    const Fifo fifo(dir / "fifo2/.zarray");  // blocked open() forever
    refused("fifo2", ".zarray", "a FIFO");
  }
  fs::create_directories(dir / "fifo3");
  {
    const Fifo fifo(dir / "fifo3/zarr.json");
    refused("fifo3", "zarr.json", "a FIFO");
  }
  fs::create_directories(dir / "folder/.zarray");  // was "metadata file of 9223372036854775807 bytes"
  refused("folder", ".zarray", "a directory");
  fs::create_directories(dir / "zero");
  fs::create_symlink("/dev/zero", dir / "zero/.zarray");  // was read without end
  refused("zero", ".zarray", "a character device");
}

TEST_CASE("zarr: metadata over 16 MiB, counted while read, or nested deeper than 32 is refused before it is parsed") {
  TempDir dir;
  fs::create_directories(dir / "big");
  const std::string big = dir / "big/.zarray";
  write_bytes(big, std::string(kV2Array) + R"(, "x": ")" + std::string(17 << 20, 'a') + "\"}");
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "big"),
                         doctest::Contains((big + ": expected a metadata file of at most 16 MiB, found more").c_str()),
                         StorageError);
  // 16 MiB of '[' took 1.27 GiB while the parser built every level before the depth was checked.
  fs::create_directories(dir / "deep");
  write_bytes(dir / "deep/.zarray", std::string((16 << 20) - 1, '['));
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "deep"),
                         doctest::Contains((dir / "deep/.zarray" + ": bad zarr metadata: expected JSON nested at most 32 "
                                                                   "deep, found deeper").c_str()),
                         StorageError);
  // Brackets inside strings are not nesting.
  fs::create_directories(dir / "strings");
  write_bytes(dir / "strings/.zarray", std::string(kV2Array) + R"(, "x": ")" + std::string(100, '[') + "\"}");
  CHECK(zarr::open(dir / "strings").shape() == Shape{8});
}

TEST_CASE("zarr: a chunk or shard file bigger than its codecs' worst case is refused before it is read, naming it") {
  TempDir dir;
  const NDArray data = pattern_array(DType::float32(), {4096});
  // zarr v2, zlib: a 4 KiB chunk in a 200 MiB (sparse) file cost 210 MiB.
  store(from_ndarray(data, {1024}), dir / "v2", {.zarr = {.codec = "zlib:1"}});
  const std::string chunk = dir / "v2/1";
  write_sparse(chunk, read_file(chunk), size_t{200} << 20);
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "v2").read_chunk({1}),
                         doctest::Contains((chunk + ": chunk 1 of " + dir / "v2" + ": expected at most ").c_str()),
                         StorageError);
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "v2").read_chunk({1}),
                         doctest::Contains("bytes (the most its codecs make of a float32 (1024,) chunk), found 209715200"),
                         StorageError);
  CHECK(array_equal(zarr::open(dir / "v2").read_chunk({0}), data.slice({Slice(0, 1024)})));
  // zarr v3, a shard whose index (at its end, unchanged) is 200 MiB after its inner chunks.
  store(from_ndarray(data, {4096}), dir / "v3", {.zarr = {.zarr_format = 3, .codec = "zstd", .inner_chunks = {1024}}});
  const std::string shard = dir / "v3/c/0";
  const std::string bytes = read_file(shard);
  const size_t index = 4 * 16 + 4;
  write_sparse(shard, bytes.substr(0, bytes.size() - index), size_t{200} << 20, bytes.substr(bytes.size() - index));
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "v3").read_chunk({0}),
                         doctest::Contains((shard + ": chunk c/0 of " + dir / "v3" + ": expected at most ").c_str()),
                         StorageError);
}

TEST_CASE("zarr: a FIFO in a chunk's or a shard's place is refused at once, never waited on") {
  TempDir dir;
  const NDArray data = pattern_array(DType::int32(), {8});
  store(from_ndarray(data, {4}), dir / "zlib", {.zarr = {.codec = "zlib:1"}});
  store(from_ndarray(data, {4}), dir / "raw", {});
  store(from_ndarray(data, {8}), dir / "shard", {.zarr = {.zarr_format = 3, .inner_chunks = {4}}});
  for (const char* file : {"zlib/1", "raw/1", "shard/c/0"}) {
    CAPTURE(file);
    const Fifo fifo(dir / file);
    const std::string store = dir / std::string(file).substr(0, std::string(file).find('/'));
    REQUIRE_THROWS_WITH_AS(from_zarr(store).compute(),
                           doctest::Contains((dir / file + ": expected a regular file, found a FIFO").c_str()), TaskError);
  }
}

TEST_CASE("zarr v2: a compressor after a filter that compresses decodes, as zarr-python reads it" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + R"(
import sys, zarr, numcodecs
d = sys.argv[0].rsplit('/', 1)[0]
z = zarr.open(d + '/chain', mode='w', shape=(4096,), chunks=(1024,), dtype='<f4',
              filters=[numcodecs.Zlib(1)], compressor=numcodecs.Zstd(3))
z[:] = pattern('<f4', (4096,))
)");
  // Was "zstd: the frame holds 1334 bytes, expected at most 0".
  CHECK(zarr::open(dir / "chain").describe_codecs().size() == 3);
  CHECK(array_equal(from_zarr(dir / "chain").compute(), pattern_array(DType::float32(), {4096})));
}

TEST_CASE("zarr v3: a chain [bytes, gzip, zstd] writes, reads back, and each step is the codec it names") {
  TempDir dir;
  fs::create_directories(dir / "chain");
  write_bytes(dir / "chain/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [4096], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1024]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "gzip", "configuration": {"level": 1}}, {"name": "zstd", "configuration": {"level": 3}}]})");
  const NDArray data = pattern_array(DType::float32(), {4096});
  const zarr::Store out = zarr::open(dir / "chain", Access::ReadWrite);
  for (int64_t i = 0; i < 4; ++i) out.write_chunk({i}, data.slice({Slice(i * 1024, (i + 1) * 1024)}));
  CHECK(array_equal(from_zarr(dir / "chain").compute(), data));
  if (python_peer::available()) {  // the file is zstd of gzip of the elements
    CHECK(run_python(dir, std::string(kPythonPattern) + R"(
import sys, gzip, numcodecs
d = sys.argv[0].rsplit('/', 1)[0]
raw = gzip.decompress(numcodecs.Zstd().decode(open(d + '/chain/c/2', 'rb').read()))
print(np.array_equal(np.frombuffer(raw, '<f4'), pattern('<f4', (4096,))[2048:3072]))
)") == "True\n");
  }
}

TEST_CASE("zarr: a group holding symbolic links to itself and to its parent is walked once") {
  TempDir dir;
  zarr::create_group(dir / "root", 2);
  zarr::create_group(dir / "root/g", 2);
  store(from_ndarray(pattern_array(DType::int8(), {3}), {2}), dir / "root/g/a", {});
  fs::create_directory_symlink(".", dir / "root/loop");   // was walked 64 levels deep, then refused
  fs::create_directory_symlink("..", dir / "root/g/up");
  fs::create_directory_symlink("a", dir / "root/g/b");    // a second name for a: listed under its first
  std::vector<std::string> tree;
  for (const zarr::Node& n : zarr::walk(dir / "root")) tree.push_back(n.path + (n.is_group ? "/" : ""));
  CHECK(tree == std::vector<std::string>{"/", "g/", "g/a"});
}

TEST_CASE("zarr v3: an index_location that is not \"end\" or \"start\" is refused, not taken for \"end\"") {
  TempDir dir;
  for (const char* location : {"5", "null", R"(["start"])", R"("middle")"}) {
    CAPTURE(location);
    fs::create_directories(dir / "s");
    write_bytes(dir / "s/zarr.json", std::string(R"({"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "int32",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}}, "fill_value": 0,
      "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": )") + location + "}}]}");
    REQUIRE_THROWS_WITH_AS(zarr::open(dir / "s"),
                           doctest::Contains((std::string("sharding_indexed: expected index_location \"end\" or "
                                                          "\"start\", found ") + location).c_str()),
                           StorageError);
  }
}

}  // namespace zarr_hostile_test
