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
//   zarr_bench io-limit PATH THREADS REPEATS   the codec limit plus what a reader of
//       files into one array cannot avoid: each chunk (or shard) file opened and read
//       with pread, its chunks decoded by c-blosc into a thread's buffer and copied
//       row by row into one array allocated (and faulted in) once; no tasks
//   zarr_bench zstd-limit PATH THREADS REPEATS   the round trip's encoding limit: every
//       chunk of PATH (the round trip's output, whole slices) compressed by zstd at
//       level 3 from memory on THREADS threads, into buffers allocated once; then
//       `write-limit`: those compressed bytes written to one file each in a fresh folder
//       beside PATH and synced, as a durable writer must (the disk's share)
//
// Each prints one line: `NAME case=PATH workers=N best=S median=S cpu=S sum=X` (cpu: the
// least CPU seconds, user + system, of one run: what it cost, whatever else ran).
#include <blosc.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
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

// The block index of stored chunk (or shard) number `n`, in C order.
std::vector<int64_t> block_of(const ta::Chunks& chunks, int64_t n) {
  std::vector<int64_t> idx(chunks.ndim());
  for (size_t a = idx.size(); a-- > 0;) {
    idx[a] = n % chunks.numblocks(a);
    n /= chunks.numblocks(a);
  }
  return idx;
}

// The inner chunks of a shard file's bytes, in C order, as (offset, size) pairs
// (size 0: not written): its index (little-endian uint64 offset, nbytes pairs, then a
// crc32c) is at the end.
std::vector<std::pair<size_t, size_t>> inner_chunks(std::string_view bytes, int64_t inner) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t index_at = bytes.size() - static_cast<size_t>(inner) * 16 - 4;
  for (int64_t i = 0; i < inner; ++i) {
    uint64_t off = 0, len = 0;
    std::memcpy(&off, bytes.data() + index_at + i * 16, 8);
    std::memcpy(&len, bytes.data() + index_at + i * 16 + 8, 8);
    out.emplace_back(off == UINT64_MAX ? 0 : off, off == UINT64_MAX ? 0 : len);
  }
  return out;
}

// Inner chunks per shard (1 for an unsharded store).
int64_t inner_per_shard(const ta::zarr::Store& z) {
  int64_t inner = 1;
  if (z.metadata().inner_chunk_shape.empty()) return inner;
  for (size_t a = 0; a < z.chunk_shape().size(); ++a) inner *= z.chunk_shape()[a] / z.metadata().inner_chunk_shape[a];
  return inner;
}

// Every compressed chunk of the store, in memory.
std::vector<std::string> chunks_of(const std::string& path) {
  const ta::zarr::Store z = ta::zarr::open(path);
  std::vector<std::string> out;
  const int64_t blocks = z.chunks().total_blocks();
  for (int64_t n = 0; n < blocks; ++n) {
    const std::string bytes = slurp(z.chunk_path(block_of(z.chunks(), n)));
    if (z.metadata().inner_chunk_shape.empty()) {
      out.push_back(bytes);
      continue;
    }
    for (auto [off, len] : inner_chunks(bytes, inner_per_shard(z))) {
      if (len != 0) out.push_back(bytes.substr(off, len));
    }
  }
  return out;
}

// Runs fn(thread, item) for items 0..count-1 on `threads` threads, each taking the next item.
template <class F>
void parallel(int threads, size_t count, F&& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t i; (i = next.fetch_add(1)) < count;) fn(static_cast<size_t>(t), i);
    });
  }
  for (auto& th : pool) th.join();
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
  std::atomic<uint64_t> bytes{0};
  for (int r = 0; r < repeats; ++r) {
    bytes = 0;
    times.time([&] {
      parallel(threads, chunks.size(), [&](size_t t, size_t i) {
        const int n = blosc_decompress_ctx(chunks[i].data(), out[t].data(), biggest, 1);
        if (n < 0) std::abort();
        bytes += static_cast<uint64_t>(n);
      });
    });
  }
  report("blosc-limit", path, threads, times, bytes);
  return 0;
}

// All of file `path` into `buf` (bigger than any of the files: a short read is the
// end), with one pread as a reader that knows about how big chunk files are does.
size_t read_file(const std::string& path, std::vector<char>& buf) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) std::abort();
  size_t n = 0;
  for (ssize_t got; (got = ::pread(fd, buf.data() + n, buf.size() - n, static_cast<off_t>(n))) > 0;) {
    n += static_cast<size_t>(got);
  }
  ::close(fd);
  if (n == buf.size()) std::abort();
  return n;
}

int io_limit(const std::string& path, int threads, int repeats) {
  const ta::zarr::Store z = ta::zarr::open(path);
  const ta::Shape& shape = z.shape();
  const ta::Shape inner = z.metadata().inner_chunk_shape.empty() ? z.chunk_shape() : z.metadata().inner_chunk_shape;
  if (shape.size() != 3 || z.dtype().itemsize() != 2) {
    std::fprintf(stderr, "io-limit: expected a 3-d array of 2-byte elements (the bench's), found %s\n",
                 ta::shape_str(shape).c_str());
    return 2;
  }
  for (size_t a = 0; a < 3; ++a) {
    if (shape[a] % inner[a] != 0) {
      std::fprintf(stderr, "io-limit: expected chunks that divide the shape, found %s in %s\n",
                   ta::shape_str(inner).c_str(), ta::shape_str(shape).c_str());
      return 2;
    }
  }
  const auto Y = static_cast<size_t>(shape[1]), X = static_cast<size_t>(shape[2]);
  std::vector<uint16_t> all(static_cast<size_t>(shape[0]) * Y * X);  // zeroed: faulted in once
  const size_t chunk_bytes = static_cast<size_t>(inner[0] * inner[1] * inner[2]) * 2;
  const int64_t per_shard = inner_per_shard(z);
  size_t biggest = 0;
  for (int64_t n = 0; n < z.chunks().total_blocks(); ++n) {
    biggest = std::max<size_t>(biggest, fs::file_size(z.chunk_path(block_of(z.chunks(), n))));
  }
  std::vector<std::vector<char>> file(static_cast<size_t>(threads), std::vector<char>(biggest + 1));
  std::vector<std::vector<char>> scratch(static_cast<size_t>(threads), std::vector<char>(chunk_bytes));
  // Decodes one chunk and copies its rows to their place at (z0, y0, x0).
  auto place = [&](size_t t, const char* bytes, int64_t z0, int64_t y0, int64_t x0) {
    if (blosc_decompress_ctx(bytes, scratch[t].data(), chunk_bytes, 1) != static_cast<int>(chunk_bytes)) std::abort();
    const char* row = scratch[t].data();
    for (int64_t i = 0; i < inner[0]; ++i) {
      for (int64_t j = 0; j < inner[1]; ++j, row += inner[2] * 2) {
        std::memcpy(&all[(static_cast<size_t>(z0 + i) * Y + static_cast<size_t>(y0 + j)) * X + static_cast<size_t>(x0)],
                    row, static_cast<size_t>(inner[2]) * 2);
      }
    }
  };
  Times times;
  for (int r = 0; r < repeats; ++r) {
    times.time([&] {
      parallel(threads, static_cast<size_t>(z.chunks().total_blocks()), [&](size_t t, size_t n) {
        const std::vector<int64_t> block = block_of(z.chunks(), static_cast<int64_t>(n));
        const size_t size = read_file(z.chunk_path(block), file[t]);
        std::vector<int64_t> origin(3);
        for (size_t a = 0; a < 3; ++a) origin[a] = block[a] * z.chunk_shape()[a];
        if (per_shard == 1) return place(t, file[t].data(), origin[0], origin[1], origin[2]);
        const std::string_view bytes(file[t].data(), size);
        const auto spans = inner_chunks(bytes, per_shard);
        const int64_t ny = z.chunk_shape()[1] / inner[1], nx = z.chunk_shape()[2] / inner[2];
        for (int64_t i = 0; i < per_shard; ++i) {
          const int64_t z0 = origin[0] + i / (ny * nx) * inner[0], y0 = origin[1] + i / nx % ny * inner[1],
                        x0 = origin[2] + i % nx * inner[2];
          // Past the array's edge in a partial shard, or never written (fill: the zeros already there).
          if (z0 >= shape[0] || y0 >= shape[1] || x0 >= shape[2] || spans[static_cast<size_t>(i)].second == 0) continue;
          place(t, bytes.data() + spans[static_cast<size_t>(i)].first, z0, y0, x0);
        }
      });
    });
  }
  uint64_t sum = 0;
  for (uint16_t v : all) sum += v;
  report("io-limit", path, threads, times, sum);
  return 0;
}

// The level run.sh writes the round trip's output with.
constexpr int kRoundTripZstdLevel = 3;

int zstd_limit(const std::string& path, int threads, int repeats) {
  const ta::NDArray all = ta::from_zarr(path).compute({.num_workers = threads});
  const ta::zarr::Store z = ta::zarr::open(path);
  size_t slice = z.dtype().itemsize();  // bytes of one stored chunk: whole trailing axes
  for (size_t a = 1; a < z.shape().size(); ++a) slice *= static_cast<size_t>(z.shape()[a]);
  if (z.shape().empty() || z.chunk_shape()[0] != 1 || slice * static_cast<size_t>(z.shape()[0]) != all.nbytes()) {
    std::fprintf(stderr, "zstd-limit: expected chunks of one whole slice (1, ...), found %s\n",
                 ta::shape_str(z.chunk_shape()).c_str());
    return 2;
  }
  const auto count = static_cast<size_t>(z.shape()[0]);
  const size_t bound = ZSTD_compressBound(slice);
  std::vector<std::vector<char>> out(count, std::vector<char>(bound));  // zeroed: faulted in once
  std::vector<size_t> sizes(count);
  std::vector<ZSTD_CCtx*> cctx(static_cast<size_t>(threads));
  for (auto& c : cctx) c = ZSTD_createCCtx();
  Times encode;
  for (int r = 0; r < repeats; ++r) {
    encode.time([&] {
      parallel(threads, count, [&](size_t t, size_t i) {
        sizes[i] = ZSTD_compressCCtx(cctx[t], out[i].data(), bound, all.data() + i * slice, slice, kRoundTripZstdLevel);
        if (ZSTD_isError(sizes[i])) std::abort();
      });
    });
  }
  for (auto* c : cctx) ZSTD_freeCCtx(c);
  uint64_t total = 0;
  for (size_t n : sizes) total += n;
  report("zstd-limit", "roundtrip", threads, encode, total);

  // The disk's share: the same bytes as one file per slice, then synced.
  const fs::path dir = fs::path(path).string() + ".write-limit";
  Times write;
  for (int r = 0; r < repeats; ++r) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write.time([&] {
      parallel(threads, count, [&](size_t, size_t i) {
        const int fd = ::open((dir / std::to_string(i)).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ::write(fd, out[i].data(), sizes[i]) != static_cast<ssize_t>(sizes[i])) std::abort();
        ::close(fd);
      });
      const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (d < 0 || ::syncfs(d) != 0) std::abort();
      ::close(d);
    });
  }
  fs::remove_all(dir);
  report("write-limit", "roundtrip", threads, write, total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: zarr_bench read|into|limit|io-limit|zstd-limit PATH WORKERS REPEATS  or  zarr_bench sum PATH WHO "
                 "CASE\n");
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
  if (mode == "io-limit") return io_limit(argv[2], workers, repeats);
  if (mode == "zstd-limit") return zstd_limit(argv[2], workers, repeats);
  if (mode == "limit") return limit(argv[2], workers, repeats);
  std::fprintf(stderr, "zarr_bench: expected mode read, into, sum, limit, io-limit or zstd-limit, found '%s'\n", mode.c_str());
  return 2;
}
