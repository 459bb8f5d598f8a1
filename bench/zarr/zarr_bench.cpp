// bench/zarr: tessera's side of scripts/bench zarr.
//
//   zarr_bench read PATH WORKERS REPEATS   from_zarr(PATH).compute() into one array
//   zarr_bench into PATH WORKERS REPEATS   store(from_zarr(PATH), out) into one array
//       allocated (and faulted in) once, as the limit's buffers are
//   zarr_bench sum PATH WHO CASE           the sum of PATH's elements, as `WHO case=CASE sum=X`
//   zarr_bench limit PATH THREADS REPEATS  the codec limit: c-blosc decompressing
//       every chunk of PATH (v2 chunk files, or a v3 store's inner chunks cut out of
//       its shards by their index) from memory in a tight loop on THREADS threads,
//       into buffers allocated once
//
// Each prints one line: `NAME case=PATH workers=N best=S median=S cpu=S sum=X` (cpu: the
// least CPU seconds, user + system, of one run: what it cost, whatever else ran).
#include <blosc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"

namespace ta = tessera::array;
namespace fs = std::filesystem;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The process's CPU seconds (user + system) so far: on a shared machine, what a
// run cost, whoever else was running.
double cpu_now() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Wall seconds and CPU seconds of each run.
struct Times {
  std::vector<double> wall, cpu;
  template <class F>
  void time(F&& f) {
    const double t0 = now(), c0 = cpu_now();
    f();
    wall.push_back(now() - t0);
    cpu.push_back(cpu_now() - c0);
  }
};

void report(const char* name, const std::string& path, int workers, Times times, uint64_t sum) {
  std::sort(times.wall.begin(), times.wall.end());
  std::sort(times.cpu.begin(), times.cpu.end());
  std::printf("%s case=%s workers=%d best=%.4f median=%.4f cpu=%.4f sum=%llu\n", name, fs::path(path).filename().c_str(),
              workers, times.wall.front(), times.wall[times.wall.size() / 2], times.cpu.front(),
              static_cast<unsigned long long>(sum));
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

uint64_t sum_of(const ta::NDArray& all) {
  uint64_t sum = 0;
  const auto* p = all.data<uint16_t>();
  const int64_t n = all.size();
  for (int64_t i = 0; i < n; ++i) sum += p[i];
  return sum;
}

int read(const std::string& path, int workers, int repeats) {
  Times times;
  uint64_t sum = 0;
  for (int r = 0; r < repeats; ++r) {
    ta::NDArray all;
    times.time([&] { all = ta::from_zarr(path).compute({.num_workers = workers}); });
    sum = sum_of(all);
  }
  report("tessera", path, workers, times, sum);
  return 0;
}

int read_into(const std::string& path, int workers, int repeats) {
  const ta::Array x = ta::from_zarr(path);
  ta::NDArray out = ta::NDArray::zeros(x.dtype(), x.shape());
  Times times;
  uint64_t sum = 0;
  for (int r = 0; r < repeats; ++r) {
    times.time([&] { ta::store(ta::from_zarr(path), out, {.num_workers = workers}); });
    sum = sum_of(out);
  }
  report("tessera-into", path, workers, times, sum);
  return 0;
}

// Every compressed chunk of the store, in memory.
std::vector<std::string> chunks_of(const std::string& path) {
  const ta::zarr::Store z = ta::zarr::open(path);
  std::vector<std::string> out;
  const int64_t blocks = z.chunks().total_blocks();
  for (int64_t n = 0; n < blocks; ++n) {
    std::vector<int64_t> idx(z.chunks().ndim());
    int64_t rest = n;
    for (size_t a = idx.size(); a-- > 0;) {
      idx[a] = rest % z.chunks().numblocks(a);
      rest /= z.chunks().numblocks(a);
    }
    const std::string bytes = slurp(z.chunk_path(idx));
    if (z.metadata().inner_chunk_shape.empty()) {
      out.push_back(bytes);
      continue;
    }
    // Sharded: the index (offset, nbytes little-endian uint64 pairs, then a crc32c) at the end.
    int64_t inner = 1;
    for (size_t a = 0; a < idx.size(); ++a) inner *= z.chunk_shape()[a] / z.metadata().inner_chunk_shape[a];
    const size_t index_at = bytes.size() - static_cast<size_t>(inner) * 16 - 4;
    for (int64_t i = 0; i < inner; ++i) {
      uint64_t off = 0, len = 0;
      std::memcpy(&off, bytes.data() + index_at + i * 16, 8);
      std::memcpy(&len, bytes.data() + index_at + i * 16 + 8, 8);
      if (off != UINT64_MAX) out.push_back(bytes.substr(off, len));
    }
  }
  return out;
}

int limit(const std::string& path, int threads, int repeats) {
  const std::vector<std::string> chunks = chunks_of(path);
  std::vector<std::vector<char>> out(static_cast<size_t>(threads));
  size_t biggest = 0;
  for (const std::string& c : chunks) {
    size_t nbytes = 0, cbytes = 0, blocksize = 0;
    blosc_cbuffer_sizes(c.data(), &nbytes, &cbytes, &blocksize);
    biggest = std::max(biggest, nbytes);
  }
  for (auto& o : out) o.assign(biggest, 0);
  Times times;
  uint64_t total = 0;
  for (int r = 0; r < repeats; ++r) {
    std::atomic<size_t> next{0};
    std::atomic<uint64_t> bytes{0};
    const double t0 = now(), c0 = cpu_now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        uint64_t mine = 0;
        for (size_t i; (i = next.fetch_add(1)) < chunks.size();) {
          const int n = blosc_decompress_ctx(chunks[i].data(), out[static_cast<size_t>(t)].data(), biggest, 1);
          if (n < 0) std::abort();
          mine += static_cast<uint64_t>(n);
        }
        bytes += mine;
      });
    }
    for (auto& th : pool) th.join();
    times.wall.push_back(now() - t0);
    times.cpu.push_back(cpu_now() - c0);
    total = bytes;
  }
  report("blosc-limit", path, threads, times, total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: zarr_bench read|into|limit PATH WORKERS REPEATS  or  zarr_bench sum PATH WHO CASE\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int workers = std::atoi(argv[3]), repeats = std::atoi(argv[4]);
  if (mode == "read") return read(argv[2], workers, repeats);
  if (mode == "into") return read_into(argv[2], workers, repeats);
  if (mode == "sum") {
    std::printf("%s case=%s sum=%llu\n", argv[3], argv[4],
                static_cast<unsigned long long>(sum_of(ta::from_zarr(argv[2]).compute({.num_workers = 2}))));
    return 0;
  }
  return limit(argv[2], workers, repeats);
}
