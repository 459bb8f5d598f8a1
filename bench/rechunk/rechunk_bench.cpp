// bench_rechunk — the in-memory rows-to-columns rechunk, side by
// side with dask and with this machine's memcpy bandwidth, in one run.
//
// A float64 array of ROWS x COLS (default 16384 x 8192 = 1 GiB) in row blocks
// (BLOCK, COLS) is rechunked to column blocks (ROWS, BLOCK) by each tessera
// method at each worker count, and computed into one contiguous array (as
// dask's `compute()` gives one numpy array), stored into an existing array,
// and taken as the new blocks alone. The same workload runs in dask
// (bench/peers/rechunk_dask.py) and the table gives each time as a share of
// memcpy's bandwidth (one thread, pre-touched destination), and compute()'s as
// a speed-up over dask at the same worker count.
//
//   build/bench/bench_rechunk [--rows R] [--cols C] [--block B] [--repeat N]
//                             [--workers 1,2] [--no-peer]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/array/ops/creation.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/scheduler/get.hpp"

namespace ta = tessera::array;

namespace {

struct Args {
  int64_t rows = 16384, cols = 8192, block = 256;
  int repeat = 3;
  std::vector<int> workers{1, 2};
  bool peer = true;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_rechunk: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--rows") a.rows = std::stoll(next());
    else if (k == "--cols") a.cols = std::stoll(next());
    else if (k == "--block") a.block = std::stoll(next());
    else if (k == "--repeat") a.repeat = std::stoi(next());
    else if (k == "--no-peer") a.peer = false;
    else if (k == "--workers") {
      a.workers.clear();
      std::stringstream ss(next());
      for (std::string w; std::getline(ss, w, ',');) a.workers.push_back(std::stoi(w));
    } else {
      std::fprintf(stderr, "bench_rechunk: unknown option %s (see the file comment)\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

double best_of(int repeat, const std::function<void()>& f) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// dask's best time per worker count, from the peer script.
std::map<int, double> run_peer(const Args& a) {
  const char* python = std::getenv("TESSERA_PYTHON");
  std::string cmd = std::string(python ? python : "/usr/bin/python3") + " " + TESSERA_BENCH_DIR +
                    "/peers/rechunk_dask.py " + std::to_string(a.rows) + " " + std::to_string(a.cols) + " " +
                    std::to_string(a.block) + " " + std::to_string(a.repeat);
  for (int w : a.workers) {
    cmd += ' ';  // not " " + std::to_string(w): GCC 12 warns (-Wrestrict) on a literal + a temporary string
    cmd += std::to_string(w);
  }
  std::map<int, double> out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("workers")) out[j["workers"].get<int>()] = j["seconds"].get<double>();
  }
  ::pclose(p);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const double gib = static_cast<double>(a.rows * a.cols * 8) / (1 << 30);
  ta::NDArray data = ta::random({a.rows, a.cols}, {a.block, -1}, 7).compute({.num_workers = 2});

  // memcpy: one thread, into memory already touched, so page faults do not count.
  ta::NDArray dst = ta::NDArray::zeros(ta::DType::float64(), data.shape());
  const double memcpy_s = best_of(a.repeat, [&] { std::memcpy(dst.data(), data.data(), data.nbytes()); });
  dst = ta::NDArray();

  const ta::Array x = ta::from_ndarray(data, {a.block, -1});
  struct Method {
    std::string name;
    ta::RechunkOptions options;
  };
  const std::vector<Method> methods{
      {"tasks", {.method = ta::RechunkMethod::tasks, .fuse = false}},
      {"tasks fused", {.method = ta::RechunkMethod::tasks}},
      {"shuffle (memory)", {.method = ta::RechunkMethod::shuffle, .disk = false}},
      {"shuffle (disk scratch)", {.method = ta::RechunkMethod::shuffle}},
  };
  const std::map<int, double> dask = a.peer ? run_peer(a) : std::map<int, double>{};

  std::printf("rechunk %lld x %lld float64 (%.2f GiB), rows (%lld, %lld) -> columns (%lld, %lld), best of %d\n",
              static_cast<long long>(a.rows), static_cast<long long>(a.cols), gib, static_cast<long long>(a.block),
              static_cast<long long>(a.cols), static_cast<long long>(a.rows), static_cast<long long>(a.block),
              a.repeat);
  std::printf("memcpy (1 thread): %.3f s, %.2f GiB/s\n\n", memcpy_s, gib / memcpy_s);
  // Three ways to take the result: compute() into a new array (as dask's
  // compute gives a new numpy array; its fresh pages fault in as they are
  // written), store into an existing array (pre-touched, like memcpy's
  // destination), and the new blocks alone (the rechunk itself).
  auto pct = [&](double s) { return 100.0 * memcpy_s / s; };
  std::printf("| method | workers | compute() s | %% of memcpy | x dask | into existing s | %% of memcpy "
              "| blocks only s | %% of memcpy |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  ta::NDArray existing = ta::NDArray::zeros(ta::DType::float64(), data.shape());
  for (const Method& m : methods) {
    const ta::Array y = ta::rechunk(x, {-1, a.block}, m.options);
    for (int w : a.workers) {
      const double s = best_of(a.repeat, [&] { ta::NDArray out = y.compute({.num_workers = w}); });
      const double into_s = best_of(a.repeat, [&] { ta::store(y, existing, {.num_workers = w}); });
      const double blocks_s = best_of(a.repeat, [&] { tessera::get(y.graph(), y.keys(), {.num_workers = w}); });
      const auto d = dask.find(w);
      const std::string vs = d == dask.end() ? "-" : std::to_string(d->second / s).substr(0, 5);
      std::printf("| %s | %d | %.3f | %.0f%% | %s | %.3f | %.0f%% | %.3f | %.0f%% |\n", m.name.c_str(), w, s, pct(s),
                  vs.c_str(), into_s, pct(into_s), blocks_s, pct(blocks_s));
    }
  }
  for (const auto& [w, s] : dask) {
    std::printf("| dask threaded | %d | %.3f | %.0f%% | 1 | - | - | - | - |\n", w, s, pct(s));
  }
  return 0;
}
