// Tests that `tessera rechunk` stays in --max-mem when the count of chunks is
// what is large: a store of many tiny chunks, a zarr.json declaring 2^31
// chunks, shards of a million inner chunks. Peak memory is the child's own
// ru_maxrss, from wait4 on the spawned tool (not RUSAGE_CHILDREN, which would
// also count earlier children of this test process).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "array/rechunk/test_util.hpp"
#include "base/sanitizers.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"

// Under AddressSanitizer or ThreadSanitizer a child's RSS holds the sanitizer's
// shadow memory and quarantine, so the RSS bounds below are checked in the release
// build only; the sanitizer builds still check every exit status and message.
#if TESSERA_ASAN || TESSERA_TSAN
#define CHECK_RSS(cond)                                          \
  do {                                                           \
    MESSAGE("sanitizer build, RSS bound not checked: " #cond);   \
    static_cast<void>(sizeof(cond)); /* its names stay used */   \
  } while (false)
#else
#define CHECK_RSS(cond) CHECK(cond)
#endif

extern char** environ;

namespace bounds_test {  // one translation unit with the suite's other files (-Dunity_tests)

using namespace tessera::array;
using testing::TempDir;
namespace fs = std::filesystem;

namespace {

struct Child {
  int status = -1;
  int64_t peak_rss = 0;  // bytes
  double seconds = 0;
  std::string err;
};

// Runs `tessera ARGS...` in `dir` (stderr to a file), with a time limit.
Child spawn_tool(const fs::path& dir, std::vector<std::string> args, int limit_s = 60) {
  const char* exe = std::getenv("TESSERA_TOOL");
  REQUIRE_MESSAGE(exe != nullptr, "TESSERA_TOOL is not set (run through meson test)");
  const fs::path err = dir / "stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  args.insert(args.begin(), exe);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, exe, &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  Child c;
  struct rusage usage {};
  int status = 0;
  for (;;) {  // poll, so that a run past the limit is killed rather than hanging the suite
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(limit_s)) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      FAIL("tessera ran past ", limit_s, " s");
    }
    ::usleep(10000);
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.peak_rss = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  std::stringstream text;
  text << std::ifstream(err).rdbuf();
  c.err = text.str();
  return c;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

constexpr int64_t MiB = int64_t{1} << 20;

}  // namespace

// 512 x 512 one-byte chunks (2^18), only the first row of chunks on disk (the
// rest read as the fill value, 7): one task per chunk held about a kilobyte
// each, 250 MiB for a 256 KiB array, where the limit is 64 MiB + 100 MiB.
TEST_CASE("tessera rechunk: a store of 2^18 one-byte chunks stays within --max-mem 64MiB + 100 MiB") {
  TempDir dir;
  const fs::path src = dir.path / "tiny.zarr";
  write_file(src / ".zarray",
             R"({"zarr_format": 2, "shape": [512, 512], "chunks": [1, 1], "dtype": "|u1", "compressor": null,)"
             R"( "filters": null, "fill_value": 7, "order": "C"})");
  for (int j = 0; j < 512; ++j) std::ofstream(src / ("0." + std::to_string(j))) << static_cast<char>(j % 251);
  const Child c = spawn_tool(dir.path, {"rechunk", "tiny.zarr", "out.zarr", "--chunks", "128,128", "--max-mem",
                                        "64MiB", "--workers", "2", "--no-progress"});
  REQUIRE_MESSAGE(c.status == 0, c.err);
  MESSAGE("peak RSS ", c.peak_rss / MiB, " MiB in ", c.seconds, " s");
  CHECK_RSS(c.peak_rss <= 64 * MiB + 100 * MiB);
  const NDArray out = from_zarr((dir.path / "out.zarr").string()).compute();
  CHECK(zarr::open((dir.path / "out.zarr").string()).chunk_shape() == Shape{128, 128});
  const auto* v = out.data<uint8_t>();
  for (int j = 0; j < 512; ++j) CHECK(v[j] == j % 251);
  CHECK(v[512] == 7);
  CHECK(v[512 * 512 - 1] == 7);
}

// 2^31 chunks of 256 x 256 float64 declared in a few hundred bytes: reading
// them needs 2^31 tasks whatever their grouping (each chunk is already more
// than a worker may hold in a block at --max-mem 64MiB), so the rechunk is
// refused at once, naming the count, and so is the dry run.
TEST_CASE("tessera rechunk: a zarr.json of 2^31 chunks is refused at once, naming the count, --dry-run too") {
  TempDir dir;
  write_file(dir.path / "huge.zarr" / "zarr.json",
             R"({"zarr_format": 3, "node_type": "array", "shape": [16777216, 8388608], "data_type": "float64",)"
             R"( "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 256]}},)"
             R"( "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,)"
             R"( "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})");
  for (const bool dry : {false, true}) {
    CAPTURE(dry);
    std::vector<std::string> args = {"rechunk", "huge.zarr", "out.zarr", "--chunks", "65536,65536", "--max-mem", "64MiB"};
    if (dry) args = {"rechunk", "--dry-run", "huge.zarr", "--chunks", "65536,65536", "--max-mem", "64MiB"};
    const Child c = spawn_tool(dir.path, args, 20);
    CHECK(c.status == 2);
    CHECK_MESSAGE(c.err.find("--max-mem: 67108864 bytes cannot hold the task graph of huge.zarr: its 2147483648 "
                             "chunks of (256, 256)") != std::string::npos, c.err);
    CHECK_RSS(c.peak_rss < 100 * MiB);
    CHECK(c.seconds < 10);
    CHECK(!fs::exists(dir.path / "out.zarr"));
  }
}

TEST_CASE("tessera rechunk: a target of too many chunks for --max-mem is refused, naming the count") {
  TempDir dir;
  npy::save((dir.path / "a.npy").string(), NDArray::full(DType::uint8(), {2048, 2048}, Scalar(1)));
  const Child c = spawn_tool(dir.path, {"rechunk", "a.npy", "out.zarr", "--chunks", "2,2", "--max-mem", "64MiB"}, 20);
  CHECK(c.status == 2);
  CHECK_MESSAGE(c.err.find("to 1048576 chunks of (2, 2): about ") != std::string::npos, c.err);
  CHECK(c.err.find("choose larger --chunks or give a larger --max-mem") != std::string::npos);
  CHECK(!fs::exists(dir.path / "out.zarr"));
}

// One shard of 2^20 one-byte inner chunks: 16 bytes of index each, and about
// 280 (written) or 100 (read) bytes of per-inner-chunk records each before.
TEST_CASE("tessera rechunk --shard: a shard of 2^20 inner chunks costs its index, not records per inner chunk") {
  TempDir dir;
  NDArray data = NDArray::empty(DType::uint8(), {1024, 1024});
  for (int64_t i = 0; i < data.size(); ++i) data.data<uint8_t>()[i] = static_cast<uint8_t>(i % 253);
  npy::save((dir.path / "a.npy").string(), data);
  const int64_t inner = int64_t{1} << 20;
  const Child w = spawn_tool(dir.path, {"rechunk", "a.npy", "s.zarr", "--zarr-format", "3", "--shard", "1024,1024",
                                        "--chunks", "1,1", "--max-mem", "512MiB", "--workers", "1", "--no-progress"});
  REQUIRE_MESSAGE(w.status == 0, w.err);
  MESSAGE("write: peak RSS ", w.peak_rss / MiB, " MiB in ", w.seconds, " s");
  CHECK_RSS(w.peak_rss <= 40 * MiB + 64 * inner);  // the index three times (filled, encoded, written) and the program
  const Child r = spawn_tool(dir.path, {"rechunk", "s.zarr", "back.zarr", "--chunks", "512,1024", "--max-mem", "512MiB",
                                        "--workers", "1", "--no-progress"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  MESSAGE("read: peak RSS ", r.peak_rss / MiB, " MiB in ", r.seconds, " s");
  CHECK_RSS(r.peak_rss <= 40 * MiB + 40 * inner);  // the index twice (as stored, decoded)
  CHECK(array_equal(from_zarr((dir.path / "back.zarr").string()).compute(), data));

  // The index counts against --max-mem: 48 MiB while written, 32 MiB while read.
  const Child small = spawn_tool(dir.path, {"rechunk", "a.npy", "t.zarr", "--zarr-format", "3", "--shard", "1024,1024",
                                            "--chunks", "1,1", "--max-mem", "64MiB", "--workers", "1"});
  CHECK(small.status == 2);
  CHECK_MESSAGE(small.err.find("with its index of 1048576 inner chunks of --chunks (1, 1) (50331648 bytes while "
                               "written, 48 per inner chunk)") != std::string::npos, small.err);
  const Child small_read = spawn_tool(dir.path, {"rechunk", "s.zarr", "u.zarr", "--chunks", "512,1024", "--max-mem",
                                                 "64MiB", "--workers", "1"});
  CHECK(small_read.status == 2);
  CHECK_MESSAGE(small_read.err.find("each shard holds 1048576 inner chunks of (1, 1), whose index takes 33554432 "
                                    "bytes while the shard is read") != std::string::npos, small_read.err);
}

}  // namespace bounds_test
