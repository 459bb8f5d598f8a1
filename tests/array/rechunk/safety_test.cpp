// Nothing is lost: what `store`, `rechunk_store` and `tessera rechunk` may
// replace, how they publish, and what interrupts, kills, a full disk and a
// read-only destination leave behind (at most the complete old or the complete
// new output, never a temporary after a clean stop).
#include <doctest/doctest.h>

#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "array/rechunk/test_util.hpp"
#include "storage/publish.hpp"
#include "base/sanitizers.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"

// A named namespace: scripts/test compiles a suite as one file, where another
// test file's helpers of the same name would clash.
namespace safety_test {

using namespace tessera::array;
using tessera::StorageError;
using testing::iota;
using testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// Entries of `dir` whose name holds tessera's temporary marker.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tessera-tmp-") != std::string::npos || name.find(".tessera-old-") != std::string::npos) {
      found.push_back(name);
    }
  }
  return found;
}

const char* tool_path() {
  const char* exe = std::getenv("TESSERA_TOOL");
  REQUIRE_MESSAGE(exe != nullptr, "TESSERA_TOOL is not set (run through meson test)");
  return exe;
}

// `tessera ARGS` started in `dir`, stderr to dir/../<pid>.err; returns its pid.
pid_t start_tool(const fs::path& dir, const std::string& args, const fs::path& err) {
  const std::string cmd = "cd '" + dir.string() + "' && exec " + tool_path() + " " + args + " 2>'" + err.string() + "'";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

struct Exit {
  int status = -1;  // exit status, or -1 when killed
  int signal = 0;
  std::string err;
};

Exit wait_tool(pid_t pid, const fs::path& err) {
  int rc = 0;
  REQUIRE(::waitpid(pid, &rc, 0) == pid);
  Exit e{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, WIFSIGNALED(rc) ? WTERMSIG(rc) : 0, read_text(err)};
  fs::remove(err);
  return e;
}

Exit tool(const fs::path& dir, const std::string& args) {
  const fs::path err = dir.parent_path() / (dir.filename().string() + ".err");
  return wait_tool(start_tool(dir, args, err), err);
}

// Waits until `dir` holds a temporary (the run is writing), at most `limit`.
bool wait_for_temporary(const fs::path& dir, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (!temporaries(dir).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// A pid no process has (above Linux's largest pid_max).
constexpr const char* kDeadPid = "2147483646";

// A tmpfs of `size` mounted at `at`, when this process may mount one.
struct SmallTmpfs {
  fs::path at;
  bool mounted = false;
  SmallTmpfs(const fs::path& where, const std::string& options) : at(where) {
    fs::create_directories(at);
    if (::geteuid() != 0) return;
    const std::string cmd = "mount -t tmpfs -o " + options + " tessera-test '" + at.string() + "' 2>/dev/null";
    mounted = std::system(cmd.c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted) (void)std::system(("umount '" + at.string() + "'").c_str());
  }
};

}  // namespace

TEST_CASE("store: overwrite refuses a folder holding other files and names what it found") {
  TempDir dir;
  const fs::path target = dir.path / "notes";
  fs::create_directories(target);
  write_text(target / "thesis.txt", "years of work");
  REQUIRE_THROWS_WITH_AS(store(zeros({4}, 2), target.string(), {.overwrite = true}),
                         doctest::Contains("will not replace it: it is a directory without .zarray or zarr.json"),
                         StorageError);
  write_text(target / ".zarray", "{}");
  REQUIRE_THROWS_WITH_AS(store(zeros({4}, 2), target.string(), {.overwrite = true}),
                         doctest::Contains("a directory holding 'thesis.txt', which is not part of a zarr array"),
                         StorageError);
  CHECK(read_text(target / "thesis.txt") == "years of work");
  CHECK(temporaries(dir.path).empty());
}

TEST_CASE("store: overwrite refuses the working directory, a protected path and a folder holding one") {
  TempDir dir;
  const fs::path here = fs::current_path();
  fs::current_path(dir.path);
  CHECK_THROWS_WITH_AS(store(zeros({4}, 2), ".", {.overwrite = true}),
                       doctest::Contains("it is the working directory"), StorageError);
  fs::current_path(here);
  npy::save((dir.path / "src.npy").string(), iota({4}, DType::float64()));
  const StoreOptions keep_src{.overwrite = true, .protect = {(dir.path / "src.npy").string()}};
  CHECK_THROWS_WITH_AS(store(zeros({4}, 2), (dir.path / "src.npy").string(), keep_src),
                       doctest::Contains("it is the source"), StorageError);
  CHECK_THROWS_WITH_AS(store(zeros({4}, 2), dir.path.string(), keep_src),
                       doctest::Contains("it is a folder holding"), StorageError);
  CHECK(fs::exists(dir.path / "src.npy"));
}

TEST_CASE("store: a .npy target replaces only a .npy file; a zarr target only a zarr array") {
  TempDir dir;
  write_text(dir.path / "a.npy", "not numpy");
  CHECK_THROWS_WITH_AS(store(zeros({4}, 2), (dir.path / "a.npy").string(), {.overwrite = true}),
                       doctest::Contains("it is a file that is not a .npy file"), StorageError);
  CHECK(read_text(dir.path / "a.npy") == "not numpy");
  write_text(dir.path / "z", "plain");
  CHECK_THROWS_WITH_AS(store(zeros({4}, 2), (dir.path / "z").string(), {.overwrite = true}),
                       doctest::Contains("it is not a directory"), StorageError);
  fs::create_symlink(dir.path / "a.npy", dir.path / "link.npy");
  CHECK_THROWS_WITH_AS(store(zeros({4}, 2), (dir.path / "link.npy").string(), {.overwrite = true}),
                       doctest::Contains("it is a symbolic link"), StorageError);
}

TEST_CASE("store: replacing publishes the complete new output and leaves no temporary") {
  TempDir dir;
  const std::string z = (dir.path / "out.zarr").string();
  const std::string n = (dir.path / "out.npy").string();
  store(from_ndarray(iota({8, 8}, DType::float64()), {4, 4}), z);
  store(from_ndarray(iota({8, 8}, DType::float64()), {4, 4}), n);
  store(from_ndarray(iota({8, 8}, DType::int32()), {2, 8}), z, {.overwrite = true});
  store(from_ndarray(iota({8, 8}, DType::int32()), {2, 8}), n, {.overwrite = true});
  CHECK(zarr::open(z).chunk_shape() == Shape{2, 8});
  CHECK(array_equal(from_zarr(z).compute(), iota({8, 8}, DType::int32())));
  CHECK(array_equal(npy::open(n), iota({8, 8}, DType::int32())));
  CHECK(temporaries(dir.path).empty());
  CHECK(dir.entries() == 2);
}

TEST_CASE("store: what a killed process left is cleaned by the next store, and an old output put back") {
  TempDir dir;
  const fs::path out = dir.path / "out.zarr";
  const fs::path stale_tmp = dir.path / (std::string(".out.zarr.tessera-tmp-") + kDeadPid + "-0");
  const fs::path aside = dir.path / (std::string(".out.zarr.tessera-old-") + kDeadPid + "-0");
  const fs::path live = dir.path / (".out.zarr.tessera-tmp-" + std::to_string(::getppid()) + "-0");
  fs::create_directories(stale_tmp);
  write_text(stale_tmp / "0.0", "partial");
  fs::create_directories(live);
  store(from_ndarray(iota({8}, DType::float64()), {4}), aside.string());  // an old output renamed aside
  const std::vector<std::string> done = clean_temporaries(out.string());
  REQUIRE(done.size() == 2);
  CHECK(!fs::exists(stale_tmp));
  CHECK(fs::exists(live));  // its process runs
  CHECK(array_equal(from_zarr(out.string()).compute(), iota({8}, DType::float64())));
  fs::create_directories(stale_tmp);
  store(from_ndarray(iota({8}, DType::float64()), {2}), out.string(), {.overwrite = true});
  CHECK(!fs::exists(stale_tmp));
  CHECK(zarr::open(out.string()).chunk_shape() == Shape{2});
}

namespace {

// Runs `make` in a child process (after `setup`, which returns false when the
// child cannot be set up) and waits until the child is gone. Returns the
// child's exit status: 0 when it made its temporary, 77 when setup failed.
template <class Setup, class Make>
int in_child(Setup setup, Make make) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (!setup()) ::_exit(77);
    make();
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// A host name of its own for this process, as another machine has: a new UTS
// namespace (as root, or inside a new user namespace where those are allowed).
bool on_another_host() {
  if (::unshare(CLONE_NEWUTS) != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWUTS) != 0) return false;
  const char name[] = "tessera-other-host";
  return ::sethostname(name, sizeof name - 1) == 0;
}

}  // namespace

// A writer on another host of a shared file system (here: a process with a
// host name of its own) has a PID that means nothing on this one; its
// temporary must outlive a local clean even when no local process has that
// PID. A temporary of a process of this host that is gone is still removed.
TEST_CASE("store: a temporary made on another host is left alone; one of a gone local process is removed") {
  TempDir dir;
  const std::string out = (dir.path / "out.zarr").string();
  auto make_temporary = [&] { fs::create_directories(tessera::storage::temporary_path(out)); };
  const int status = in_child(on_another_host, make_temporary);
  if (status == 77) {
    MESSAGE("skipped: this process may not make a UTS namespace");
    return;
  }
  REQUIRE(status == 0);
  const std::vector<std::string> other = temporaries(dir.path);
  REQUIRE(other.size() == 1);
  CHECK(clean_temporaries(out).empty());
  CHECK(temporaries(dir.path) == other);

  REQUIRE(in_child([] { return true; }, make_temporary) == 0);
  REQUIRE(temporaries(dir.path).size() == 2);
  const std::vector<std::string> done = clean_temporaries(out);
  CHECK(done.size() == 1);
  CHECK(temporaries(dir.path) == other);
}

TEST_CASE("tessera rechunk: a DST ending in .npy is a .npy file for every method") {
  TempDir dir;
  const NDArray data = iota({64, 512}, DType::float64());
  store(from_ndarray(data, {8, -1}), (dir.path / "rows.zarr").string());
  for (const std::string method : {"auto", "tasks", "shuffle"}) {
    CAPTURE(method);
    const Exit r = tool(dir.path, "rechunk rows.zarr out.npy --chunks -1,64 --overwrite --no-progress --method " + method);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(fs::is_regular_file(dir.path / "out.npy"));
    CHECK(array_equal(npy::open((dir.path / "out.npy").string()), data));
  }
}

TEST_CASE("tessera rechunk: a DST with a trailing slash (as shell completion writes it) is that folder") {
  TempDir dir;
  const NDArray data = iota({64, 32}, DType::float64());
  store(from_ndarray(data, {8, -1}), (dir.path / "rows.zarr").string());
  // Was "out.zarr/: appeared while tessera was writing it", an empty out.zarr left behind.
  for (const std::string format : {"2", "3"}) {
    CAPTURE(format);
    const Exit r = tool(dir.path, "rechunk rows.zarr/ out.zarr/ --chunks -1,8 --overwrite --no-progress --zarr-format " + format);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(array_equal(from_zarr((dir.path / "out.zarr").string()).compute(), data));
    CHECK(zarr::open((dir.path / "out.zarr").string()).chunk_shape() == Shape{64, 8});
    CHECK(temporaries(dir.path).empty());
    CHECK(temporaries(dir.path / "out.zarr").empty());
  }
}

TEST_CASE("tessera rechunk --overwrite refuses '.', SRC, a folder holding SRC and a folder of other files") {
  TempDir dir;
  fs::create_directories(dir.path / "work");
  const fs::path work = dir.path / "work";
  npy::save((work / "a.npy").string(), iota({16, 16}, DType::float64()));
  fs::create_directories(work / "docs");
  write_text(work / "docs" / "notes.txt", "keep me");
  struct Case {
    std::string dst, found;
  };
  for (const Case& c : {Case{".", "it is the working directory"}, Case{"work/a.npy", "it is the source 'work/a.npy'"},
                        Case{"work", "it is a folder holding 'work/a.npy'"},
                        Case{"work/docs", "it is a directory without .zarray or zarr.json"}}) {
    CAPTURE(c.dst);
    const Exit r = tool(dir.path, "rechunk work/a.npy " + c.dst + " --chunks 4,4 --overwrite --no-progress");
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.err.find(c.found) != std::string::npos, r.err);
  }
  CHECK(read_text(work / "docs" / "notes.txt") == "keep me");
  CHECK(array_equal(npy::open((work / "a.npy").string()), iota({16, 16}, DType::float64())));
  CHECK(temporaries(work).empty());
}

TEST_CASE("tessera rechunk: a FIFO as a chunk or a shard is an error at once, never a hang that SIGINT ends with 1") {
  TempDir dir;
  const NDArray data = iota({8, 8}, DType::float64());
  store(from_ndarray(data, {4, -1}), (dir.path / "v2.zarr").string(), {.zarr = {.codec = "zstd"}});
  store(from_ndarray(data, {8, -1}), (dir.path / "v3.zarr").string(),
        {.zarr = {.zarr_format = 3, .inner_chunks = {4, 8}}});
  const fs::path err = dir.path.parent_path() / (dir.path.filename().string() + ".err");
  for (const std::string chunk : {"v2.zarr/1.0", "v3.zarr/c/0/0"}) {
    CAPTURE(chunk);
    fs::remove(dir.path / chunk);
    REQUIRE(::mkfifo((dir.path / chunk).c_str(), 0644) == 0);
    const std::string src = chunk.substr(0, chunk.find('/'));
    const pid_t pid = start_tool(dir.path, "rechunk " + src + " out.zarr --chunks 2,2 --overwrite --no-progress", err);
    // Was blocked in open() until a SIGINT, then "Interrupted system call" and exit 1.
    int rc = 0;
    pid_t done = 0;
    for (int i = 0; i < 1000 && (done = ::waitpid(pid, &rc, WNOHANG)) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Exit r;
    if (done == 0) {
      ::kill(pid, SIGINT);
      r = wait_tool(pid, err);
    } else {
      r = Exit{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, WIFSIGNALED(rc) ? WTERMSIG(rc) : 0, read_text(err)};
      fs::remove(err);
    }
    CHECK_MESSAGE(done != 0, "still running after 10 s; after SIGINT: exit " << r.status << ", " << r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find(chunk + ": expected a regular file, found a FIFO") != std::string::npos);
    CHECK(!fs::exists(dir.path / "out.zarr"));
    CHECK(temporaries(dir.path).empty());
    fs::remove(dir.path / chunk);
  }
}

// A source big enough that a run lasts a while after its temporary appears.
void make_long_source(const fs::path& dir) {
  npy::save((dir / "big.npy").string(), iota({2048, 2048}, DType::float64()));  // 32 MiB
}
// A run that succeeds when left alone, a few tenths of a second after its
// temporary appears: the shuffle through a 2 MiB budget, one worker.
const std::string kLongRun =
    "rechunk big.npy out.zarr --chunks -1,8 --method shuffle --max-mem 2MiB --workers 1 --no-progress";

TEST_CASE("tessera rechunk: SIGINT and SIGTERM stop the run, remove its temporaries and exit 130 and 143") {
  TempDir dir;
  make_long_source(dir.path);
  const fs::path err = dir.path.parent_path() / (dir.path.filename().string() + ".err");
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    const pid_t pid = start_tool(dir.path, kLongRun, err);
    REQUIRE(wait_for_temporary(dir.path, std::chrono::seconds(60)));
    ::kill(pid, sig);
    const Exit r = wait_tool(pid, err);
    CHECK_MESSAGE(r.status == 128 + sig, r.err);
    CHECK(r.err.find("interrupted by") != std::string::npos);
    CHECK(temporaries(dir.path).empty());
    CHECK(!fs::exists(dir.path / "out.zarr"));
  }
  // Left alone, the same run finishes: the status above came from the signal.
  const Exit whole = tool(dir.path, kLongRun);
  CHECK_MESSAGE(whole.status == 0, whole.err);
}

TEST_CASE("tessera rechunk: SIGKILL at random points of an overwrite leaves DST the complete old or new output") {
  TempDir dir;
  make_long_source(dir.path);
  const NDArray data = npy::open((dir.path / "big.npy").string());
  const fs::path out = dir.path / "out.zarr";
  REQUIRE(tool(dir.path, "rechunk big.npy out.zarr --chunks 256,-1 --no-progress").status == 0);
  const fs::path err = dir.path.parent_path() / (dir.path.filename().string() + ".err");
  std::mt19937_64 rng(11);
  int old_seen = 0, new_seen = 0;
  // Under a sanitizer each run of the tool is several times slower, and what the
  // sanitizer adds here (the next run's clean-up of what a kill left) is covered
  // by a few rounds: 6 there, 20 in the release build, where the kills land at
  // every stage of the run.
  constexpr int rounds = TESSERA_ASAN || TESSERA_TSAN ? 6 : 20;
  for (int round = 0; round < rounds; ++round) {
    CAPTURE(round);
    // Each round flips between two chunkings, so the old and the new differ.
    const bool to_columns = zarr::open(out.string()).chunk_shape() == Shape{256, 2048};
    const Shape old_chunks = zarr::open(out.string()).chunk_shape();
    const Shape new_chunks = to_columns ? Shape{2048, 256} : Shape{256, 2048};
    const std::string chunks = to_columns ? "-1,256" : "256,-1";
    const pid_t pid = start_tool(dir.path, "rechunk big.npy out.zarr --overwrite --no-progress --workers 2 --chunks " + chunks, err);
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 400000)(rng)));
    ::kill(pid, SIGKILL);
    const Exit r = wait_tool(pid, err);
    REQUIRE_MESSAGE((r.signal == SIGKILL || r.status == 0), r.err);
    REQUIRE(fs::exists(out));  // an overwrite never leaves DST missing
    const Shape found = zarr::open(out.string()).chunk_shape();
    REQUIRE((found == old_chunks || found == new_chunks));
    (found == old_chunks ? old_seen : new_seen)++;
    REQUIRE(array_equal(from_zarr(out.string()).compute(), data));  // complete: no chunk missing
    // The next run cleans (and reports) what the killed one left.
    const bool left = !temporaries(dir.path).empty();
    const Exit next = tool(dir.path, "rechunk big.npy out.zarr --overwrite --no-progress --chunks " +
                                         std::string(found == Shape{256, 2048} ? "256,-1" : "-1,256"));
    REQUIRE_MESSAGE(next.status == 0, next.err);
    if (left) CHECK(next.err.find("(a temporary of an interrupted run)") != std::string::npos);
    CHECK(temporaries(dir.path).empty());
  }
  MESSAGE("kills that left the old output: " << old_seen << ", the new one: " << new_seen);
}

TEST_CASE("tessera rechunk: a full disk is an error naming DST, and nothing is left on it") {
  TempDir dir;
  SmallTmpfs small(dir.path / "small", "size=1m");
  if (!small.mounted) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root and mount permission)");
    return;
  }
  npy::save((dir.path / "a.npy").string(), iota({512, 512}, DType::float64()));  // 2 MiB
  for (const std::string method : {"auto", "tasks", "shuffle"}) {
    for (const std::string dst : {"small/out.zarr", "small/out.npy"}) {
      CAPTURE(method);
      CAPTURE(dst);
      const Exit r = tool(dir.path, "rechunk a.npy " + dst + " --chunks -1,64 --no-progress --scratch . --method " + method);
      CHECK(r.status == 1);
      CHECK_MESSAGE(r.err.find("No space left on device") != std::string::npos, r.err);
      CHECK_MESSAGE(r.err.find("small/") != std::string::npos, r.err);
      CHECK(fs::is_empty(small.at));
    }
  }
}

TEST_CASE("tessera rechunk: a read-only destination is an error naming it, and the old output stays") {
  TempDir dir;
  npy::save((dir.path / "a.npy").string(), iota({64, 64}, DType::float64()));
  SmallTmpfs ro(dir.path / "ro", "size=1m");
  if (!ro.mounted) {
    MESSAGE("skipped: cannot mount a tmpfs here (needs root and mount permission)");
    return;
  }
  REQUIRE(tool(dir.path, "rechunk a.npy ro/out.zarr --chunks 8,8 --no-progress").status == 0);
  REQUIRE(std::system(("mount -o remount,ro '" + ro.at.string() + "'").c_str()) == 0);
  for (const std::string method : {"auto", "tasks", "shuffle"}) {
    CAPTURE(method);
    const Exit r = tool(dir.path, "rechunk a.npy ro/out.zarr --chunks -1,8 --overwrite --no-progress --scratch . --method " + method);
    CHECK(r.status == 1);
    CHECK_MESSAGE(r.err.find("Read-only file system") != std::string::npos, r.err);
    CHECK(zarr::open((ro.at / "out.zarr").string()).chunk_shape() == Shape{8, 8});
  }
}

TEST_CASE("tessera rechunk: a .npy header promising more than the file holds is refused at once, naming both sizes") {
  TempDir dir;
  // A header claiming (10^6, 10^6) float64 in front of 800 bytes of data.
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }";
  dict.append(128 - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(dict.size() & 0xff) + char(dict.size() >> 8) + dict;
  bytes.append(800, '\0');
  write_text(dir.path / "huge.npy", bytes);
  REQUIRE(fs::file_size(dir.path / "huge.npy") == 928);
  const Exit r = tool(dir.path, "rechunk huge.npy out.zarr --chunks 1000,1000 --no-progress");
  CHECK(r.status == 2);
  CHECK_MESSAGE(r.err.find("huge.npy: the header promises 8000000000000 bytes of data for a float64 array of shape "
                           "(1000000, 1000000) (8000000000128 bytes in all), but the file has 800 bytes of data "
                           "(928 bytes in all)") != std::string::npos, r.err);
  CHECK(dir.entries() == 1);
}

#if !TESSERA_ASAN && !TESSERA_TSAN  // their shadow memory is RSS too
TEST_CASE("tessera rechunk: every method stays under --max-mem + 100 MiB on a source four times larger") {
  TempDir dir;
  // 256 MiB of float64 rows to columns under 16 MiB: before, the mapped source
  // pages alone (every method) and the tasks method's intermediate blocks each
  // took the peak to the size of the source.
  NDArray src = npy::create((dir.path / "src.npy").string(), DType::float64(), {8192, 4096});
  double* v = src.data<double>();
  for (int64_t i = 0; i < src.size(); ++i) v[i] = static_cast<double>(i);
  src = NDArray();
  for (const std::string method : {"auto", "tasks", "shuffle"}) {
    CAPTURE(method);
    const fs::path err = dir.path / "rechunk.err";
    // The child's peak RSS starts at this process's RSS when it forks (Linux keeps
    // it across exec): the 256 MiB result read back below, kept for reuse once
    // freed, would count in the next method's peak.
    Buffer::release_kept();
    const pid_t pid = start_tool(dir.path, "rechunk src.npy out.zarr --chunks -1,16 --max-mem 16MiB --workers 2 "
                                           "--no-progress --overwrite --method " + method, err);
    int rc = 0;
    rusage usage{};
    REQUIRE(::wait4(pid, &rc, 0, &usage) == pid);
    CHECK_MESSAGE(WIFEXITED(rc), read_text(err));
    CHECK_MESSAGE(WEXITSTATUS(rc) == 0, read_text(err));
    MESSAGE(method << ": peak RSS " << usage.ru_maxrss / 1024 << " MiB");
    CHECK(usage.ru_maxrss < (16 + 100) * 1024);  // KiB
    const NDArray out = from_zarr((dir.path / "out.zarr").string()).compute();
    CHECK(out.at<double>({8191, 4095}) == 8192.0 * 4096 - 1);
    CHECK(out.at<double>({1234, 77}) == 1234.0 * 4096 + 77);
  }
}
#endif

}  // namespace safety_test
