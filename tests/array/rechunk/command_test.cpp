// Tests of `tessera rechunk SRC DST ...`: the result, refusing to overwrite,
// bad usage, and a failing source leaving neither DST nor scratch behind.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "array/rechunk/test_util.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/rechunk/exchange.hpp"

using namespace tessera::array;
using testing::iota;
using testing::TempDir;
namespace fs = std::filesystem;

namespace {

struct Run {
  int status;
  std::string err;
  std::string out;
};

std::string take_file(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  fs::remove(path);
  return text.str();
}

// Runs `tessera ARGS` in `dir`.
Run tool(const fs::path& dir, const std::string& args) {
  const char* exe = std::getenv("TESSERA_TOOL");
  REQUIRE_MESSAGE(exe != nullptr, "TESSERA_TOOL is not set (run through meson test)");
  const fs::path err = dir / "stderr.txt";
  const fs::path out = dir / "stdout.txt";
  const std::string cmd = "cd " + dir.string() + " && " + exe + " " + args + " >" + out.string() + " 2>" + err.string();
  const int rc = std::system(cmd.c_str());
  const std::string err_text = take_file(err);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, err_text, take_file(out)};
}

NDArray read_zarr(const fs::path& path) { return from_zarr(path.string()).compute(); }

}  // namespace

TEST_CASE("tessera rechunk: .npy to zarr and zarr to zarr, by each method") {
  TempDir dir;
  const NDArray data = iota({60, 45}, DType::float64());
  npy::save((dir.path / "a.npy").string(), data);
  for (const std::string method : {"auto", "tasks", "shuffle"}) {
    CAPTURE(method);
    // --memory-limit is --max-mem under the name graph run gives it.
    const std::string mem = method == "tasks" ? "--memory-limit" : "--max-mem";
    const Run r = tool(dir.path, "rechunk a.npy b.zarr --chunks -1,8 " + mem + " 32KiB --workers 2 --method " + method);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(zarr::open((dir.path / "b.zarr").string()).metadata().chunk_shape == Shape{60, 8});
    CHECK(array_equal(read_zarr(dir.path / "b.zarr"), data));
    const Run r2 = tool(dir.path, "rechunk b.zarr c.zarr --chunks 7,keep --no-progress --method " + method);
    REQUIRE_MESSAGE(r2.status == 0, r2.err);
    CHECK(zarr::open((dir.path / "c.zarr").string()).metadata().chunk_shape == Shape{7, 8});
    CHECK(array_equal(read_zarr(dir.path / "c.zarr"), data));
    fs::remove_all(dir.path / "b.zarr");
    fs::remove_all(dir.path / "c.zarr");
  }
  CHECK(dir.entries() == 1);  // a.npy: no scratch, no temporary store
}

TEST_CASE("tessera rechunk: rows to narrow columns by tasks under a --max-mem of a few source blocks") {
  TempDir dir;
  const NDArray data = iota({256, 256}, DType::float64());  // 512 KiB
  npy::save((dir.path / "a.npy").string(), data);
  for (const std::string workers : {"1", "2"}) {
    CAPTURE(workers);
    const Run r = tool(dir.path, "rechunk a.npy b.zarr --chunks -1,2 --method tasks --max-mem 64KiB --no-progress "
                                 "--overwrite --workers " + workers);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(array_equal(read_zarr(dir.path / "b.zarr"), data));
  }
}

TEST_CASE("tessera rechunk: rows to columns with auto writes shards straight into the chunk files") {
  TempDir dir;
  const NDArray data = iota({64, 8192}, DType::float64());
  store(from_ndarray(data, {8, -1}), (dir.path / "rows.zarr").string());
  const Run r = tool(dir.path, "rechunk rows.zarr cols.zarr --chunks -1,1024 --workers 2 --no-progress");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.err.find("(blocks (64, 1024), shards written straight into its chunk files)") != std::string::npos);
  CHECK(array_equal(read_zarr(dir.path / "cols.zarr"), data));
  const Run back = tool(dir.path, "rechunk cols.zarr rows2.zarr --chunks 8,-1 --workers 2 --no-progress");
  REQUIRE_MESSAGE(back.status == 0, back.err);
  CHECK(back.err.find("rechunked, then stored") != std::string::npos);
  CHECK(array_equal(read_zarr(dir.path / "rows2.zarr"), data));
}

TEST_CASE("tessera rechunk: an existing DST is refused unless --overwrite") {
  TempDir dir;
  npy::save((dir.path / "a.npy").string(), iota({10, 10}, DType::float64()));
  fs::create_directories(dir.path / "b.zarr");
  const Run r = tool(dir.path, "rechunk a.npy b.zarr --chunks 5,5");
  CHECK(r.status == 2);
  CHECK(r.err.find("b.zarr: exists; pass --overwrite to replace it") != std::string::npos);
  const Run ok = tool(dir.path, "rechunk a.npy b.zarr --chunks 5,5 --overwrite");
  REQUIRE_MESSAGE(ok.status == 0, ok.err);
  CHECK(array_equal(read_zarr(dir.path / "b.zarr"), iota({10, 10}, DType::float64())));
}

TEST_CASE("tessera rechunk: bad usage says what was expected") {
  TempDir dir;
  npy::save((dir.path / "a.npy").string(), iota({10, 10}, DType::float64()));
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {
           Case{"a.npy b.zarr --chunks 5,x", "--chunks: expected a block size, -1, auto or keep per axis, found 'x'"},
           Case{"a.npy b.zarr", "--chunks is required"},
           Case{"a.npy b.zarr --chunks 5,5 --method fast", "--method: fast not in {auto,tasks,shuffle}"},
           Case{"a.npy b.zarr --chunks 5,5,5", "--chunks: expected one entry per axis of SRC (2), found 3"},
           Case{"a.npy b.zarr --chunks 5,5 --max-mem 1MiB --memory-limit 2MiB", "--max-mem excludes --memory-limit"},
           Case{"a.npy b.zarr --chunks 5,5 --max-mem 0", "--max-mem: expected a positive byte size, found \"0\""},
           Case{"a.npy b.zarr --chunks 5,5 --ranks 4", "--ranks requires --dry-run"},
           Case{"missing.npy b.zarr --chunks 5,5", "missing.npy"},
       }) {
    CAPTURE(c.args);
    const Run r = tool(dir.path, std::string("rechunk ") + c.args);
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.err.find(c.says) != std::string::npos, r.err);
  }
  CHECK(!fs::exists(dir.path / "b.zarr"));
}

TEST_CASE("tessera rechunk: a failing read during a shuffle leaves no DST and no scratch file") {
  TempDir dir;
  fs::create_directories(dir.path / "scratch");
  store(from_ndarray(iota({16, 16}, DType::float64()), {2, 16}), (dir.path / "a.zarr").string());
  fs::resize_file(dir.path / "a.zarr" / "5.0", 10);  // a chunk file of the wrong size
  const Run r = tool(dir.path, "rechunk a.zarr b.zarr --chunks 16,2 --method shuffle --scratch scratch");
  CHECK(r.status == 1);
  CHECK(r.err.find("5.0") != std::string::npos);
  CHECK(!fs::exists(dir.path / "b.zarr"));
  CHECK(fs::is_empty(dir.path / "scratch"));
  CHECK(dir.entries() == 2);  // a.zarr and scratch/: no temporary store left
}

TEST_CASE("tessera rechunk --report writes the run's HTML report, also when a read fails") {
  TempDir dir;
  npy::save((dir.path / "a.npy").string(), iota({64, 64}, DType::float64()));
  const Run r = tool(dir.path, "rechunk a.npy b.zarr --chunks -1,8 --method tasks --workers 2 --no-progress "
                               "--report run.html");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.err.find("tessera rechunk: report run.html (open in a browser)") != std::string::npos);
  std::string html = take_file(dir.path / "run.html");
  CHECK(html.find("<title>tessera rechunk a.npy -&gt; b.zarr</title>") != std::string::npos);
  CHECK(html.find("\"rechunk-merge\"") != std::string::npos);  // a key group of the page's data
  CHECK(html.find("\"command\":\"tessera rechunk a.npy b.zarr --chunks -1,8") != std::string::npos);

  store(from_ndarray(iota({16, 16}, DType::float64()), {2, 16}), (dir.path / "c.zarr").string());
  fs::resize_file(dir.path / "c.zarr" / "5.0", 10);  // a chunk file of the wrong size
  const Run bad = tool(dir.path, "rechunk c.zarr d.zarr --chunks 16,2 --method tasks --no-progress --report bad.html");
  CHECK(bad.status == 1);
  html = take_file(dir.path / "bad.html");
  CHECK(html.find("\"errors\":[{\"key\":") != std::string::npos);
  CHECK(html.find("5.0") != std::string::npos);

  const Run mpi = tool(dir.path, "rechunk a.npy e.zarr --chunks -1,8 --mpi --report run.html");
  CHECK(mpi.status == 2);
  CHECK(mpi.err.find("--report draws a run on one process; it cannot be used with --mpi") != std::string::npos);
}

TEST_CASE("tessera rechunk --dry-run: the plan across ranks, from a description or from SRC, without data") {
  TempDir dir;
  // rows -> columns of 64 x 64 float64 across 4 ranks, --max-mem 9000 bytes per rank: several rounds.
  const ExchangePlan plan = plan_exchange({std::vector<int64_t>(16, 4), {64}}, {{64}, std::vector<int64_t>(16, 4)}, 8,
                                          {.ranks = 4, .max_mem = exchange_budget(9000), .workers = 1});
  REQUIRE(plan.rounds.size() > 1);
  const std::string total = "total: " + std::to_string(plan.rounds.size()) + " rounds";
  const Run r = tool(dir.path, "rechunk --dry-run --ranks 4 --shape 64,64 --src-chunks 4,-1 --chunks -1,4 --max-mem 9000");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("rechunk across 4 ranks (1 worker each") != std::string::npos);
  CHECK(r.out.find("input blocks  16 of (4, 64)") != std::string::npos);
  CHECK(r.out.find(total) != std::string::npos);
  // The same array as a store: the plan comes from its metadata, and no data is read.
  store(from_ndarray(iota({64, 64}, DType::float64()), Chunks({std::vector<int64_t>(16, 4), {64}})),
        (dir.path / "a.zarr").string());
  for (int64_t i = 0; i < 16; ++i) fs::remove(zarr::open((dir.path / "a.zarr").string()).chunk_path({i, 0}));
  const Run s = tool(dir.path, "rechunk --dry-run a.zarr --ranks 4 --chunks -1,4 --max-mem 9000");
  REQUIRE_MESSAGE(s.status == 0, s.err);
  CHECK(s.out == r.out);
  const Run small = tool(dir.path, "rechunk --dry-run --ranks 4 --shape 64,64 --src-chunks 4,-1 --chunks -1,4 --max-mem 1000");
  CHECK(small.status == 2);
  CHECK(small.err.find("--max-mem: rechunk across ranks: max_mem of 875 bytes per rank cannot hold a round of one "
                       "output block") != std::string::npos);
  const Run missing = tool(dir.path, "rechunk --dry-run --shape 64,64 --chunks -1,4");
  CHECK(missing.status == 2);
  CHECK(missing.err.find("--dry-run with --shape needs --src-chunks") != std::string::npos);
  const Run bad = tool(dir.path, "rechunk --dry-run --shape 64,x --src-chunks 4,-1 --chunks -1,4");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--shape: expected positive axis lengths, found 'x'") != std::string::npos);
}
