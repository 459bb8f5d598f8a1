// Runs under a memory limit (GetOptions::memory_limit): random DAGs of results of
// random sizes give the unbounded run's results at every worker count while the
// bytes held stay within the limit plus what the running tasks just made;
// spilled results come back bit-identical; the scratch folder is gone after
// every kind of ending; a budget that cannot be met is a MemoryLimitError with
// its figures.
#include <doctest/doctest.h>

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scheduler/spill_store.hpp"
#include "storage/pages.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/not_spillable.hpp"
#include "tessera/scheduler/get.hpp"
#include "testing.hpp"

// A result whose spilled form is refused when written (as tessera.get's Python
// objects that pickle refuses): serialize counts the attempts on its `tries`.
struct Unwritable {
  std::vector<uint64_t> words;
  std::shared_ptr<std::atomic<int>> tries = std::make_shared<std::atomic<int>>(0);
  size_t nbytes() const { return words.size() * sizeof(uint64_t); }
};

template <>
struct tessera::Spillable<Unwritable> {
  static void serialize(const Unwritable& v, SpillWriter&) {
    v.tries->fetch_add(1);
    throw NotSpillable("this one cannot be written");
  }
  static Unwritable deserialize(SpillReader&) { throw Error("never written, never read"); }
};

// A named namespace: scripts/test compiles a suite as one file, where another
// test file's helpers of the same name would clash.
namespace budget_test {

using namespace tessera;
using tessera::testing::RandomDag;
namespace fs = std::filesystem;

namespace {

Result run(const Plan& plan, int workers, GetOptions opts) {
  opts.num_workers = workers;
  return workers == 0 ? get_sync(plan, opts) : get(plan, opts);
}

// A fresh folder for one test's scratch; removed (with anything left in it) at the end.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("tessera-budget-test-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir), {})); }
};


size_t words_of(uint32_t seed, uint32_t i) { return 16 + testing::mix(seed, i) % 2048; }

// One random DAG of Sized results under a quarter of its unbounded peak (or the
// most one task needs): the unbounded run's results at each worker count, held
// bytes within the limit plus one result per worker (each may just have made a
// result, or brought one back, before the run spills down again), spills when
// the limit is well below the peak, and an empty scratch folder afterwards.
// `watch` adds a posttask hook that samples held bytes after every task; without
// it no hook's mutex orders the workers, so a thread checker sees the budget's
// own synchronization only.
void check_random_dag(uint32_t seed, uint32_t n, std::initializer_list<int> worker_counts, bool watch,
                      const Scratch& scratch) {
  RandomDag d = testing::random_dag(seed, n, 0.0, [seed](uint32_t i) { return words_of(seed, i); });
  Plan plan(d.graph, d.request);
  std::vector<size_t> bytes(plan.num_tasks());
  size_t largest = 0;
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    bytes[t] = 8 * words_of(seed, static_cast<uint32_t>(plan.key(t).index()[0]));
    largest = std::max(largest, bytes[t]);
  }
  std::vector<uint64_t> expected;
  for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
  RunStats unbounded;
  get_sync(plan, {.stats = &unbounded});
  const size_t limit = std::max(testing::most_needed(plan, bytes), unbounded.peak_held_bytes / 4);
  for (int workers : worker_counts) {
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(workers);
    const size_t bound = limit + static_cast<size_t>(std::max(workers, 1)) * largest;
    std::atomic<size_t> worst{0};
    GetOptions opts{.stats = nullptr, .memory_limit = limit, .scratch_dir = scratch.dir.string()};
    if (watch) {
      Callbacks sample;
      sample.posttask = [&worst](const RunState& s, uint32_t, const Value&, int) {
        worst = std::max(worst.load(), s.held_bytes());
      };
      opts.callbacks = {sample};
    }
    RunStats stats;
    opts.stats = &stats;
    std::vector<uint64_t> got;
    testing::flatten_values(run(plan, workers, opts), got);
    CHECK(got == expected);
    CHECK(stats.peak_held_bytes <= bound);
    CHECK(worst.load() <= bound);
    if (unbounded.peak_held_bytes > 2 * limit) CHECK(stats.spill_count > 0);
    CHECK(stats.reload_count <= stats.spill_count + plan.requested().size());
    CHECK(scratch.entries() == 0);
  }
}

}  // namespace

TEST_CASE("random DAGs under a memory limit: the same results at every worker count, held bytes within the limit") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  Scratch scratch("random");
  uint32_t seed = 7000;
  for (uint32_t n : {40u, 300u, 2000u}) check_random_dag(++seed, n, {0, 1, 2, 4}, true, scratch);
}

TEST_CASE("random DAGs under a memory limit without hooks: workers share only the run's own state") {
  // The case a thread checker must see: no callback serializes the workers, so
  // every spill, reload, pin and tier change races for real.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  Scratch scratch("nohooks");
  for (uint32_t seed = 8100; seed < 8106; ++seed) check_random_dag(seed, 600, {2, 3, 4, 8}, false, scratch);
}

TEST_CASE("under a memory limit a task starts only once its inputs are back, and reads them unchanged") {
  // Sized results check their pattern when read: a result that came back damaged
  // (or not at all) would throw inside the task.
  Scratch scratch("reload");
  RandomDag d = testing::random_dag(77, 500, 0.0, [](uint32_t i) { return words_of(77, i); });
  Plan plan(d.graph, d.request);
  RunStats stats;
  std::vector<uint64_t> got;
  testing::flatten_values(
      get_sync(plan, {.stats = &stats, .memory_limit = 200000, .scratch_dir = scratch.dir.string()}), got);
  std::vector<uint64_t> expected;
  for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
  CHECK(got == expected);
  CHECK(stats.reload_count > 0);
  CHECK(stats.spilled_bytes > 0);
}

TEST_CASE("NDArray results spill into the scratch file and come back bit-identical as mapped views") {
  namespace ta = tessera::array;
  Scratch scratch("ndarray");
  constexpr int kBlocks = 12;
  constexpr int64_t kSide = 128;  // 128 KiB of uint64 per block
  std::vector<ta::NDArray> made(kBlocks);
  Graph g;
  std::vector<Key> keys;
  for (int i = 0; i < kBlocks; ++i) {
    std::mt19937_64 rng(static_cast<uint64_t>(i));
    std::vector<uint64_t> bits(kSide * kSide);
    for (auto& b : bits) b = rng();  // every bit pattern, NaN payloads included
    made[static_cast<size_t>(i)] = ta::NDArray::from_vector(bits, {kSide, kSide});
    const ta::NDArray block = made[static_cast<size_t>(i)];
    g.task(Key("block", {i}), fn("make", [block] { return block.copy(); }));
    // A transposed view spills in C order like any other array.
    g.task(Key("t", {i}), fn("transpose", [](const ta::NDArray& a) { return a.transpose(); }), ref(Key("block", {i})));
    keys.emplace_back("t", std::vector<int64_t>{i});
  }
  RunStats stats;
  Result r = get_sync(g, Keys(keys), {.stats = &stats, .memory_limit = 4 * kSide * kSide * 8,
                                      .scratch_dir = scratch.dir.string()});
  CHECK(stats.spill_count > 0);
  int mapped = 0;
  for (int i = 0; i < kBlocks; ++i) {
    const ta::NDArray& got = r[static_cast<size_t>(i)].as<ta::NDArray>();
    const ta::NDArray want = made[static_cast<size_t>(i)].transpose().copy();
    REQUIRE(got.shape() == want.shape());
    const ta::NDArray c = got.copy();
    CHECK(std::memcmp(c.data(), want.data(), want.nbytes()) == 0);
    mapped += got.writable() ? 0 : 1;
  }
  CHECK(mapped > 0);  // requested results left on disk come back as read-only mappings
  CHECK(scratch.entries() == 0);
}

namespace {

// The scratch folders in `dir` (tessera-spill-*), by name.
std::vector<std::string> spill_folders(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tessera-spill-", 0) == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A block of `words` 64-bit words, a result with a Spillable form.
Value block_of(int64_t words) { return array::NDArray::from_vector(std::vector<uint64_t>(words, 7), {words}); }

}  // namespace

// Memory a run under its limit frees goes back to the system, the large
// mappings that freed NDArray blocks leave for the next block included: kept,
// they count in RSS beside the limit (storage/pages.hpp keep_pages). A run
// starts with the caches empty, and hands back what they keep past a quarter
// of its limit (here, all).
TEST_CASE("a run that spills hands back the large mappings freed blocks left kept") {
  Scratch scratch("kept");
  array::Buffer::release_kept();
  {
    const array::Buffer kept = array::Buffer::allocate(size_t{72} << 20);
    std::memset(kept.data(), 1, kept.size());  // resident, as a block's pages are
  }  // freed: kept
  REQUIRE(detail::kept_pages().mappings == 1);
  constexpr int64_t kWords = 16384;  // 128 KiB
  Graph g;
  std::vector<Key> keys;
  for (int i = 0; i < 8; ++i) {
    g.task(Key("block", {i}), fn("make", [] { return block_of(kWords).as<array::NDArray>(); }));
    keys.emplace_back("block", std::vector<int64_t>{i});
  }
  RunStats stats;
  (void)get_sync(g, Keys(keys), {.stats = &stats, .memory_limit = 3 * kWords * 8, .scratch_dir = scratch.dir.string()});
  CHECK(stats.spill_count > 0);
  CHECK(detail::kept_pages().mappings == 0);
}

namespace {

// A process that spills one result into `dir` and is killed by SIGKILL before
// its store's destructor runs, as kill -9 or the OOM killer would. Returns the
// scratch folder it left.
fs::path killed_spiller(const fs::path& dir) {
  const std::vector<std::string> before = spill_folders(dir);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    detail::SpillStore store(dir.string(), uint64_t(1) << 30);
    uint64_t written = 0;
    store.put(block_of(4096), written);
    ::raise(SIGKILL);
    ::_exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  const std::vector<std::string> after = spill_folders(dir);
  for (const std::string& name : after) {
    if (!std::binary_search(before.begin(), before.end(), name)) return dir / name;
  }
  return {};
}

}  // namespace

// Runs killed while spilling leave their folders; the next run's first spill
// removes them, but of a folder where someone put notes.txt only the files a
// store writes; a live store's folder stays.
TEST_CASE("a spilling run removes the scratch folders that killed runs left, and only what they wrote") {
  Scratch scratch("killed");
  detail::SpillStore live(scratch.dir.string(), uint64_t(1) << 30);
  uint64_t written = 0;
  live.put(block_of(512), written);
  const fs::path foreign = killed_spiller(scratch.dir);
  CHECK(fs::exists(foreign / "0.spill"));
  { std::ofstream(foreign / "notes.txt") << "not tessera's"; }
  const fs::path killed = killed_spiller(scratch.dir);
  CHECK(fs::exists(killed / "0.spill"));
  REQUIRE(spill_folders(scratch.dir).size() == 3);

  // Every result is requested, so a limit of two blocks spills the others.
  Graph g;
  std::vector<Key> keys;
  for (int i = 0; i < 8; ++i) {
    g.task(Key("block", {i}), fn("make", [] { return block_of(4096); }));
    keys.emplace_back("block", std::vector<int64_t>{i});
  }
  RunStats stats;
  get_sync(g, Keys(keys), {.stats = &stats, .memory_limit = 2 * 4096 * 8, .scratch_dir = scratch.dir.string()});
  REQUIRE(stats.spill_count > 0);

  CHECK(!fs::exists(killed));
  CHECK(fs::exists(foreign / "notes.txt"));
  CHECK(!fs::exists(foreign / "0.spill"));
  CHECK(fs::exists(fs::path(live.folder()) / "0.spill"));
  std::vector<std::string> left = {foreign.filename().string(), fs::path(live.folder()).filename().string()};
  std::sort(left.begin(), left.end());
  CHECK(spill_folders(scratch.dir) == left);
}

TEST_CASE("the scratch folder is removed after a failure and after a cancellation") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  Scratch scratch("endings");
  RandomDag d = testing::random_dag(31, 2000, 0.0, [](uint32_t i) { return words_of(31, i); });
  Plan plan(d.graph, d.request);
  for (int workers : {0, 2, 4}) {
    CAPTURE(workers);
    {
      // Fails once results have been spilled.
      Callbacks fail_late;
      fail_late.posttask = [](const RunState& s, uint32_t, const Value&, int) {
        if (s.spill_count() > 3) throw std::runtime_error("stop here");
      };
      RunStats stats;
      REQUIRE_THROWS_WITH_AS(run(plan, workers, {.callbacks = {fail_late}, .stats = &stats, .memory_limit = 200000,
                                                 .scratch_dir = scratch.dir.string()}),
                             "stop here", std::runtime_error);
      CHECK(stats.spill_count > 3);
      CHECK(scratch.entries() == 0);
    }
    {
      CancellationToken token;
      Callbacks cancel_late;
      cancel_late.posttask = [token](const RunState& s, uint32_t, const Value&, int) {
        if (s.spill_count() > 3) token.cancel();
      };
      RunStats stats;
      REQUIRE_THROWS_AS(run(plan, workers, {.callbacks = {cancel_late}, .cancel = token, .stats = &stats,
                                            .memory_limit = 200000, .scratch_dir = scratch.dir.string()}),
                        Cancelled);
      CHECK(stats.spill_count > 3);
      CHECK(scratch.entries() == 0);
    }
  }
}

TEST_CASE("a task alone starts with room kept for its result when held results can spill to make it") {
  // One worker: every task runs alone. Its result (and working memory) comes on
  // top of what is held when it starts, so held results spill first until the
  // largest result so far fits too; the limit leaves room for a task's inputs and
  // that much, so the room can always be made.
  Scratch scratch("alone");
  RandomDag d = testing::random_dag(41, 400, 0.0, [](uint32_t i) { return words_of(41, i); });
  Plan plan(d.graph, d.request);
  std::vector<size_t> bytes(plan.num_tasks());
  size_t largest = 0;
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    bytes[t] = 8 * words_of(41, static_cast<uint32_t>(plan.key(t).index()[0]));
    largest = std::max(largest, bytes[t]);
  }
  const size_t limit = testing::most_needed(plan, bytes) + largest;
  size_t seen = 0;    // the largest result so far
  size_t worst = 0;   // the most held + seen when a task started, over the limit
  size_t starts = 0;  // tasks that started with results held
  Callbacks watch;
  watch.pretask = [&](const RunState& s, uint32_t, int) {
    worst = std::max(worst, s.held_bytes() + seen);
    starts += s.held_bytes() > 0 ? 1 : 0;
  };
  watch.posttask = [&](const RunState&, uint32_t, const Value& v, int) { seen = std::max(seen, v.nbytes()); };
  RunStats stats;
  get(plan, {.num_workers = 1, .callbacks = {watch}, .stats = &stats, .memory_limit = limit,
             .scratch_dir = scratch.dir.string()});
  CHECK(stats.spill_count > 0);
  CHECK(starts > 0);
  CHECK(worst <= limit);
}

TEST_CASE("MemoryLimitError when one task's inputs and result exceed the limit") {
  //   a (3000 B) ── b (3000 B)        limit 5000: b needs 6000 at once
  Graph g;
  g.task("a", fn("make_a", [] { return std::vector<uint8_t>(3000); }));
  g.task("b", fn("grow", [](const std::vector<uint8_t>& a) { return std::vector<uint8_t>(a.size()); }), ref("a"));
  const GetOptions opts{.memory_limit = 5000};
  REQUIRE_THROWS_WITH_AS(get_sync(g, "b", opts),
                         "memory limit of 4.9 KiB (5000) cannot be met: task b needs 5.9 KiB (6048) for its inputs "
                         "and its result together; 3.0 KiB held, the largest: a 3.0 KiB",
                         MemoryLimitError);
  try {
    get(g, "b", opts);
    FAIL("expected MemoryLimitError");
  } catch (const MemoryLimitError& e) {
    CHECK(e.task() == Key("b"));
    CHECK(e.needed() == 6048);  // two vectors of 3000 bytes and their 24-byte headers
    CHECK(e.limit() == 5000);
    REQUIRE(!e.largest().empty());
    CHECK(e.largest()[0].bytes == 3024);
  }
}

TEST_CASE("MemoryLimitError when a task must start and nothing held can spill") {
  // Ten 1000-byte leaves of a type without a Spillable form feed one sum; with
  // a limit of 4000 a leaf may start while at most 4000 bytes are held, so the
  // sixth cannot.
  struct Opaque {
    std::vector<int> xs;
    size_t nbytes() const { return xs.size() * sizeof(int); }
  };
  static_assert(!spillable<Opaque>);
  Graph g;
  std::vector<Arg> parts;
  for (int i = 0; i < 10; ++i) {
    g.task(Key("leaf", {i}), fn("leaf", [](int k) { return Opaque{std::vector<int>(250, k)}; }), i);
    parts.emplace_back(ref(Key("leaf", {i})));
  }
  auto sum = [](std::span<const Value> in) -> Value {
    long s = 0;
    for (const Value& v : in) s += v.as<Opaque>().xs[0];
    return s;
  };
  g.put("sum", Task::from_args(fn("sum", sum), std::move(parts)));
  try {
    get_sync(g, "sum", {.memory_limit = 4000});
    FAIL("expected MemoryLimitError");
  } catch (const MemoryLimitError& e) {
    CHECK(e.held() == 5000);
    CHECK(e.task().name() == "leaf");
    CHECK(e.largest().size() == 3);
    CHECK(e.largest()[0].bytes == 1000);
    CHECK(std::string(e.what()).find("to start, and nothing held can spill; 4.9 KiB held, the largest: ('leaf', ") !=
          std::string::npos);
  }
}

TEST_CASE("a limit that is never reached changes nothing, and spill events reach the spill hook") {
  RandomDag d = testing::random_dag(5, 300, 0.0, [](uint32_t i) { return words_of(5, i); });
  Plan plan(d.graph, d.request);
  RunStats free_stats, stats;
  std::vector<uint64_t> a, b;
  testing::flatten_values(get(plan, {.num_workers = 2, .stats = &free_stats}), a);
  testing::flatten_values(get(plan, {.num_workers = 2, .stats = &stats, .memory_limit = size_t{1} << 40}), b);
  CHECK(a == b);
  CHECK(stats.spill_count == 0);
  CHECK(stats.reload_count == 0);

  Scratch scratch("events");
  size_t spills = 0, reloads = 0;
  Callbacks events;
  events.spill = [&](const RunState&, const SpillEvent& e) {
    (e.kind == SpillEvent::Kind::spill ? spills : reloads) += 1;
    CHECK(e.end >= e.start);
  };
  RunStats tight;
  get(plan, {.num_workers = 2, .callbacks = {events}, .stats = &tight, .memory_limit = free_stats.peak_held_bytes / 3,
             .scratch_dir = scratch.dir.string()});
  CHECK(spills > 0);
  CHECK(spills <= tight.spill_count);  // a result that kept its file spills again without writing
  CHECK(reloads == tight.reload_count);
}

TEST_CASE("the budget's fractions are checked: 0 < memory_target <= memory_pause <= 1") {
  Graph g;
  g.task("a", fn("one", [] { return 1; }));
  for (const auto& fractions : {std::pair{0.0, 0.8}, std::pair{0.9, 0.8}, std::pair{0.6, 1.5}, std::pair{-0.1, 0.5}}) {
    const double target = fractions.first, pause = fractions.second;
    CAPTURE(target);
    CAPTURE(pause);
    const GetOptions opts{.memory_limit = 1 << 20, .memory_target = target, .memory_pause = pause};
    CHECK_THROWS_WITH_AS(get_sync(g, "a", opts),
                         doctest::Contains("GetOptions: expected 0 < memory_target <= memory_pause <= 1, found"),
                         Error);
  }
  CHECK_THROWS_WITH_AS(get(g, "a", {.memory_limit = 1 << 20, .memory_target = 0.9, .memory_pause = 0.8}),
                       "GetOptions: expected 0 < memory_target <= memory_pause <= 1, found memory_target 0.9 and "
                       "memory_pause 0.8",
                       Error);
  CHECK(get_sync(g, "a", {.memory_limit = 1 << 20, .memory_target = 1.0, .memory_pause = 1.0}).as<int>() == 1);
}

TEST_CASE("the room per running task is checked: task_footprint >= 1") {
  Graph g;
  g.task("a", fn("one", [] { return 1; }));
  CHECK_THROWS_WITH_AS(get(g, "a", {.memory_limit = 1 << 20, .task_footprint = 0.5}),
                       "GetOptions: expected task_footprint >= 1 (a running task holds its result at least), found 0.5",
                       Error);
  CHECK(get(g, "a", {.num_workers = 2, .memory_limit = 1 << 20, .task_footprint = 2}).as<int>() == 1);
}

// Each of 8 Unwritable and 8 NDArray blocks (64 KiB each) is read twice: by a
// sum, then, once every sum is in, again. Between the passes the 1 MiB they hold
// is past the 640 KiB limit: the blocks spill; a refused result stays in memory,
// tried at most once, and the run finishes with every result.
TEST_CASE("a result whose serialize throws NotSpillable stays in memory and is never offered again") {
  Scratch scratch("refused");
  constexpr int kEach = 8;
  constexpr int64_t kWords = 8192;
  Graph g;
  std::vector<Unwritable> made(kEach);
  std::vector<Key> sums, keys;
  for (int i = 0; i < kEach; ++i) {
    made[static_cast<size_t>(i)].words.assign(kWords, static_cast<uint64_t>(i));
    const Unwritable u = made[static_cast<size_t>(i)];
    g.task(Key("u", {i}), fn("unwritable", [u] { return u; }));
    g.task(Key("b", {i}), fn("block", [] { return block_of(kWords); }));
    for (const char* name : {"u", "b"}) {
      g.task(Key(std::string("s") + name, {i}), fn("first", [](Value v) { return v.nbytes(); }), ref(Key(name, {i})));
      sums.emplace_back(std::string("s") + name, std::vector<int64_t>{i});
    }
  }
  std::vector<Arg> all;
  for (const Key& k : sums) all.emplace_back(ref(k));
  g.put("gate", Task::from_args(fn("gate", [](std::span<const Value>) { return Value(0); }), std::move(all)));
  for (int i = 0; i < kEach; ++i) {
    for (const char* name : {"u", "b"}) {
      g.task(Key(std::string("r") + name, {i}), fn("second", [](Value v, int) { return v.nbytes(); }),
             ref(Key(name, {i})), ref("gate"));
      keys.emplace_back(std::string("r") + name, std::vector<int64_t>{i});
    }
  }
  RunStats stats;
  const Result r =
      get_sync(g, Keys(keys), {.stats = &stats, .memory_limit = 640 << 10, .scratch_dir = scratch.dir.string()});
  for (size_t i = 0; i < keys.size(); ++i) CHECK(r[i].as<size_t>() == kWords * sizeof(uint64_t));
  CHECK(stats.spill_count > 0);
  int tried = 0;
  for (const Unwritable& u : made) {
    CHECK(u.tries->load() <= 1);
    tried += u.tries->load();
  }
  CHECK(tried > 0);
  CHECK(scratch.entries() == 0);
}

}  // namespace budget_test
