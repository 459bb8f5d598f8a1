// Tests of `tessera info PATH` and of `tessera rechunk`'s zarr output options
// (--codec, --zarr-format, --shard).
#include <doctest/doctest.h>

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tools/tool_test.hpp"

using namespace tessera::array;
using tessera::tool_test::Run;
using tessera::tool_test::run_tessera;
namespace fs = std::filesystem;

namespace {

struct Dir {
  Dir() {
    std::string t = (fs::temp_directory_path() / "tessera-info-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

Array ramp(const Shape& shape, const Shape& chunks) {
  std::vector<AxisChunks> axes(chunks.begin(), chunks.end());
  return from_function<int32_t>([](std::span<const int64_t> i) { return (i[0] * 31 + i[1]) % 100; }, shape,
                       ChunkSpec(axes));
}

}  // namespace

TEST_CASE("tessera info: a compressed zarr v2 array: codecs, stored bytes and ratio, chunks initialized") {
  Dir dir;
  store(ramp({100, 60}, {50, 30}), dir / "a.zarr", {.zarr = {.codec = "blosc:zstd:5:bitshuffle"}});
  fs::remove(dir / "a.zarr/1.1");
  const Run r = run_tessera("info " + dir / "a.zarr");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("Type               : zarr v2 array\n") != std::string::npos);
  CHECK(r.out.find("Shape              : (100, 60)\n") != std::string::npos);
  CHECK(r.out.find("Data type          : int32\n") != std::string::npos);
  CHECK(r.out.find("Chunk shape        : (50, 30)\n") != std::string::npos);
  CHECK(r.out.find("Codecs             : order=C, dtype=<i4\n"
                   "                   : blosc(cname=zstd, clevel=5, shuffle=bitshuffle, typesize=4)\n") != std::string::npos);
  CHECK(r.out.find("No. bytes          : 24000 (23.4 KiB)\n") != std::string::npos);
  CHECK(r.out.find("Storage ratio      : ") != std::string::npos);
  CHECK(r.out.find("Chunks initialized : 3/4\n") != std::string::npos);
}

TEST_CASE("tessera info: a sharded zarr v3 array shows shards and inner chunks; a group shows its tree") {
  Dir dir;
  zarr::create_group(dir / "g.zarr", 3);
  store(ramp({64, 64}, {32, 32}), dir / "g.zarr/s",
        {.zarr = {.zarr_format = 3, .codec = "zstd:3", .inner_chunks = {8, 16}}});
  zarr::create_group(dir / "g.zarr/sub", 3);
  store(ramp({4, 4}, {2, 2}), dir / "g.zarr/sub/t", {.zarr = {.zarr_format = 3}});
  const Run r = run_tessera("info " + dir / "g.zarr/s");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("Shard shape        : (32, 32)\n"
                   "Chunk shape        : (8, 16) (inside each shard)\n") != std::string::npos);
  CHECK(r.out.find("sharding_indexed(chunk_shape=(8, 16), index_location=end)") != std::string::npos);
  CHECK(r.out.find("Chunks initialized : 4/4 (shards)\n") != std::string::npos);
  const Run g = run_tessera("info " + dir / "g.zarr");
  REQUIRE_MESSAGE(g.status == 0, g.err);
  CHECK(g.out == dir / "g.zarr" + "/ (zarr v3 group)\n"
                 "  s (64, 64) int32 (zarr v3)\n"
                 "  sub/ (zarr v3 group)\n"
                 "    t (4, 4) int32 (zarr v3)\n");
  const Run missing = run_tessera("info " + dir / "nothing");
  CHECK(missing.status == 2);
  CHECK(missing.err == "tessera: " + dir / "nothing" + ": no zarr array here: expected .zarray (zarr v2) or zarr.json (zarr v3)\n");
}

TEST_CASE("tessera rechunk: --codec, --zarr-format 3 and --shard write what they say; bad values are usage errors") {
  Dir dir;
  store(ramp({40, 30}, {10, 30}), dir / "src.zarr", {.zarr = {.codec = "lz4"}});
  const NDArray want = from_zarr(dir / "src.zarr").compute();
  Run r = run_tessera("rechunk " + dir / "src.zarr " + dir / "v3.zarr --chunks 5,6 --shard 20,30 --zarr-format 3 "
                      "--codec blosc:zstd:5:bitshuffle --no-progress");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  zarr::Store v3 = zarr::open(dir / "v3.zarr");
  CHECK(v3.metadata().zarr_format == 3);
  CHECK(v3.chunk_shape() == Shape{20, 30});
  CHECK(v3.metadata().inner_chunk_shape == Shape{5, 6});
  CHECK(array_equal(from_zarr(dir / "v3.zarr").compute(), want));
  r = run_tessera("rechunk " + dir / "v3.zarr " + dir / "v2.zarr --chunks 40,3 --codec zstd:3 --no-progress");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(zarr::open(dir / "v2.zarr").describe_codecs().back() == "zstd(level=3)");
  CHECK(array_equal(from_zarr(dir / "v2.zarr").compute(), want));

  r = run_tessera("rechunk " + dir / "src.zarr " + dir / "x.zarr --chunks 5,5 --codec snappy --no-progress");
  CHECK(r.status == 2);
  CHECK(r.err.find("--codec: unknown codec 'snappy'; expected none, blosc") != std::string::npos);
  r = run_tessera("rechunk " + dir / "src.zarr " + dir / "x.zarr --chunks 5,5 --codec lz4 --zarr-format 3 --no-progress");
  CHECK(r.status == 2);
  CHECK(r.err.find("--codec: codec 'lz4' has no zarr v3 form; expected none, blosc, zstd or gzip") != std::string::npos);
  r = run_tessera("rechunk " + dir / "src.zarr " + dir / "x.zarr --chunks 5,5 --shard 10,10 --no-progress");
  CHECK(r.status == 2);
  CHECK(r.err.find("--shard needs --zarr-format 3") != std::string::npos);
  r = run_tessera("rechunk " + dir / "src.zarr " + dir / "x.zarr --chunks 3,auto --shard 9,9 --zarr-format 3 --no-progress");
  CHECK(r.status == 2);
  CHECK(r.err.find("with --shard, expected positive inner chunk sizes, found 'auto'") != std::string::npos);
  // --shard's own errors name --shard (they said --chunks).
  r = run_tessera("rechunk " + dir / "src.zarr " + dir / "x.zarr --chunks 5,5 --shard 10 --zarr-format 3 --no-progress");
  CHECK(r.status == 2);
  CHECK(r.err.find("--shard: expected one entry per axis of SRC (2), found 1") != std::string::npos);
  r = run_tessera("rechunk " + dir / "src.zarr " + dir / "x.zarr --chunks 5,5 --shard 10,x --zarr-format 3 --no-progress");
  CHECK(r.status == 2);
  CHECK(r.err.find("--shard: expected a block size, -1, auto or keep per axis, found 'x'") != std::string::npos);
  CHECK(!fs::exists(dir / "x.zarr"));
}

TEST_CASE("tessera info and rechunk: a big-endian float16 .npy rechunks into zarr v2 and v3 bit for bit; info says float16") {
  // Every float16 bit pattern (NaN payloads, subnormals, infinities): a copy that
  // went through float anywhere would change some.
  Dir dir;
  NDArray h = NDArray::empty(DType::float16(), {256, 256});
  for (int64_t i = 0; i < h.size(); ++i) {
    const auto bits = static_cast<uint16_t>(i);
    std::memcpy(h.data() + 2 * i, &bits, 2);
  }
  npy::save(dir / "h.npy", h, /*big_endian=*/true);
  Run r = run_tessera("info " + dir / "h.npy");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("Data type          : float16\n") != std::string::npos);
  r = run_tessera("rechunk " + dir / "h.npy " + dir / "v2.zarr --chunks 100,64 --codec blosc:lz4:5:shuffle --no-progress");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  r = run_tessera("rechunk " + dir / "v2.zarr " + dir / "v3.zarr --chunks 64,100 --zarr-format 3 --codec zstd:3 --no-progress");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  for (const char* name : {"v2.zarr", "v3.zarr"}) {
    CAPTURE(name);
    const NDArray got = from_zarr(dir / name).compute();
    REQUIRE(got.dtype() == DType::float16());
    CHECK(std::memcmp(got.data(), h.data(), h.nbytes()) == 0);
  }
  r = run_tessera("info " + dir / "v2.zarr");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("Data type          : float16\n") != std::string::npos);
  CHECK(r.out.find("Codecs             : order=C, dtype=<f2\n"
                   "                   : blosc(cname=lz4, clevel=5, shuffle=shuffle, typesize=2)\n") != std::string::npos);
  r = run_tessera("info " + dir / "v3.zarr");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("Data type          : float16\n") != std::string::npos);
}

TEST_CASE("tessera info: zarr dimension names and member names print with their control characters escaped") {
  Dir dir;
  zarr::create_group(dir / "g.zarr", 3);
  store(ramp({4, 4}, {2, 2}), dir / "g.zarr/t\x1b[2J", {.zarr = {.zarr_format = 3}});
  const std::string meta = dir / "g.zarr/t\x1b[2J/zarr.json";
  auto j = nlohmann::json::parse(tessera::tool_test::read_text(meta));
  j["dimension_names"] = {"x\x1b]0;owned\x07", "y"};
  std::ofstream(meta) << j.dump();
  const Run r = run_tessera("info '" + dir / "g.zarr/t\x1b[2J" + "'");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("Dimension names    : x\\x1b]0;owned\\x07, y\n") != std::string::npos);
  const Run g = run_tessera("info " + dir / "g.zarr");
  REQUIRE_MESSAGE(g.status == 0, g.err);
  CHECK(g.out.find("  t\\x1b[2J (4, 4) int32 (zarr v3)\n") != std::string::npos);
  for (const std::string& printed : {r.out, r.err, g.out, g.err}) CHECK(printed.find('\x1b') == std::string::npos);
}

TEST_CASE("tessera rechunk: a --report that cannot be written is refused before anything is written") {
  Dir dir;
  store(ramp({8, 8}, {4, 4}), dir / "a.zarr");
  for (const std::string& report : {dir / "", dir / "no/r.html"}) {
    CAPTURE(report);
    const Run r = run_tessera("rechunk " + dir / "a.zarr" + " " + dir / "b.zarr" + " --chunks 8,8 --report " + report);
    CHECK(r.status == 2);
    CHECK(r.err.find("tessera: " + report + ": --report: ") == 0);
    CHECK(!fs::exists(dir / "b.zarr"));
  }
}
