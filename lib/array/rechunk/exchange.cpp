// rechunk_store across ranks: the plan of exchange.hpp, run.
//
// Every rank calls this with the same arguments, so every rank computes the
// same plan; the only things sent are shards (and error flags). In each round
// a rank walks the round's output blocks in order and, for each piece whose
// input block it owns, reserves the piece's place in its message to the
// block's owner; the owner walks the same blocks in the same order and finds
// each piece at the same place in the message from the piece's input owner.
// No offsets travel.
//
// Errors: each phase that can fail on one rank alone (checking the target,
// creating the temporary store, reading and packing, assembling and writing,
// publishing) ends in agree_on_errors, so a failure on any rank is an Error on
// every rank naming it, and no rank waits in an exchange its peers have left;
// a task's failure while reading and packing is the same TaskError on every
// rank (agree_on_task_errors), as ta::store across ranks gives.
// The store is published by storage::publish_across: rank 0 makes the
// temporary store, every rank writes its chunks into it, and rank 0 renames it
// into place only after every rank has written its chunks (removes it after
// every rank has stopped, on failure). The exchange itself cannot
// fail short of the transport (MPI aborts the job).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include "across/rank_error.hpp"
#include "array/block.hpp"
#include "array/ops/store.hpp"
#include "array/rechunk/across.hpp"
#include "array/rechunk/blocks.hpp"
#include "storage/publish.hpp"
#include "storage/publish_across.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/rechunk/exchange.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

namespace tessera::array::detail {
namespace {

// One piece this rank sends: the box of its input block, and its place in the
// message to `dest`.
struct Outgoing {
  int dest = 0;
  int64_t offset = 0;
  Intersection::Index start, shape;
};

// One piece this rank receives: its place in the message from `source`, and
// the box of the output block it fills.
struct Incoming {
  int source = 0;
  int64_t offset = 0;
  Intersection::Index start, shape;
};

struct OutputBlock {
  std::vector<int64_t> index;
  std::vector<Incoming> pieces;
};

struct Exchange {
  const Array& x;
  Chunks target;
  Communicator& comm;
  const RechunkStoreOptions& options;
  ExchangePlan plan;
  std::vector<AxisMap> maps;
  std::vector<int64_t> old_strides, new_strides;
  std::shared_ptr<const zarr::Store> store;
  std::string token;

  int rank() const { return comm.rank(); }
  int workers() const {
    return options.store.compute.num_workers > 0 ? options.store.compute.num_workers
                                                  : static_cast<int>(tbb::this_task_arena::max_concurrency());
  }
};

int64_t flat_of(std::span<const int64_t> index, const std::vector<int64_t>& strides) {
  int64_t flat = 0;
  for (size_t a = 0; a < index.size(); ++a) flat += index[a] * strides[a];
  return flat;
}

int64_t box_bytes(std::span<const int64_t> shape, size_t itemsize) {
  auto n = static_cast<int64_t>(itemsize);
  for (int64_t e : shape) n *= e;
  return n;
}

std::vector<int64_t> prefix(const std::vector<int64_t>& counts) {
  std::vector<int64_t> offsets(counts.size(), 0);
  for (size_t q = 1; q < counts.size(); ++q) offsets[q] = offsets[q - 1] + counts[q - 1];
  return offsets;
}

// Runs `f(i)` for i in [0, n) on `workers` threads (no more than the cores
// this process may use: mpirun binds a rank to its own); the first exception
// is rethrown once every thread has stopped. Plain threads taking indices from
// a counter, not oneTBB: each item is a whole output block (assembled and
// written), so a thread's start costs nothing beside it, and ThreadSanitizer sees
// every hand-over, where oneTBB's stolen tasks move through its uninstrumented
// library (the sanitizer build reported them as races).
template <class F>
void parallel(int workers, size_t n, F&& f) {
  const int cores = std::max(tbb::info::default_concurrency(), 1);
  const size_t threads = std::min(n, static_cast<size_t>(std::clamp(workers, 1, cores)));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr first;
  auto loop = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        f(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!first) first = std::current_exception();
        next.store(n);  // no new items; those started finish
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(loop);
    loop();
  }  // joins
  if (first) std::rethrow_exception(first);
}

void run_round(Exchange& e, const ExchangeRound& round, size_t k) {
  const auto ranks = static_cast<size_t>(e.comm.size());
  const int me = e.rank();
  const DType dtype = e.x.dtype();
  const size_t itemsize = dtype.itemsize();
  std::vector<int64_t> send_counts(ranks, 0), recv_counts(ranks, 0);
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<Outgoing>>> inputs;  // by flat index
  std::vector<OutputBlock> outputs;
  for (const BlockBox& box : round.boxes) {
    std::vector<int64_t> extent(box.begin.size());
    for (size_t a = 0; a < extent.size(); ++a) extent[a] = box.end[a] - box.begin[a];
    for_each_index(extent, [&](std::span<const int64_t> local) {
      std::vector<int64_t> j(local.begin(), local.end());
      for (size_t a = 0; a < j.size(); ++a) j[a] += box.begin[a];
      const int dest = block_owner(flat_of(j, e.new_strides), e.comm.size());
      if (dest == me) outputs.push_back({j, {}});
      for_each_intersection(e.maps, j, [&](const Intersection& piece) {
        const int64_t flat = flat_of(piece.input_block, e.old_strides);
        const int source = block_owner(flat, e.comm.size());
        const int64_t bytes = box_bytes(piece.shape, itemsize);
        if (source == me) {
          auto& [index, out] = inputs[flat];
          if (index.empty()) index.assign(piece.input_block.begin(), piece.input_block.end());
          out.push_back({dest, send_counts[static_cast<size_t>(dest)], piece.input_start, piece.shape});
          send_counts[static_cast<size_t>(dest)] += bytes;
        }
        if (dest == me) {
          outputs.back().pieces.push_back(
              {source, recv_counts[static_cast<size_t>(source)], piece.output_start, piece.shape});
          recv_counts[static_cast<size_t>(source)] += bytes;
        }
      });
    });
  }
  const std::vector<int64_t> send_offsets = prefix(send_counts), recv_offsets = prefix(recv_counts);
  Buffer send;
  // A task's failure (reading, computing x's blocks) is the same TaskError on
  // every rank, naming its key and rank, as in a run across ranks.
  tessera::detail::agree_on_task_errors(e.comm, [&] {
    send = Buffer::allocate(static_cast<size_t>(send_offsets.back() + send_counts.back()));
    // The input blocks are computed by x's graph (read, decoded) with one more
    // task each that cuts its pieces into the send buffer; each block is
    // released once cut. A fresh graph per round, so the tasks' hold on the
    // send buffer ends with the round.
    Graph g = e.x.graph();
    std::vector<Key> keys;
    const std::string name = absl::StrCat("rechunk-pack-", e.token);
    for (auto& [flat, entry] : inputs) {
      auto pieces = std::make_shared<const std::vector<Outgoing>>(std::move(entry.second));
      const std::vector<int64_t>& index = entry.first;
      Key key(name, {static_cast<int64_t>(k), flat});
      g.put(key, Task(fn("rechunk_pack",
                         [pieces, send, send_offsets, dtype, shape = e.x.chunks().block_shape(index),
                          block_key = e.x.block_key(index)](const NDArray& block) {
                           check_block(block, shape, dtype, block_key, "rechunk_store");
                           for (const Outgoing& o : *pieces) {
                             const Shape s(o.shape.begin(), o.shape.end());
                             NDArray(send, dtype, s, NDArray::c_strides(s, dtype.itemsize()),
                                     send_offsets[static_cast<size_t>(o.dest)] + o.offset)
                                 .assign(box_view(block, o.start, o.shape));
                           }
                           return static_cast<int64_t>(pieces->size());
                         }),
                      ref(e.x.block_key(index))));
      keys.push_back(std::move(key));
    }
    if (!keys.empty()) (void)tessera::get(g, Keys(keys), e.options.store.compute);
  });
  Buffer recv = Buffer::allocate(static_cast<size_t>(recv_offsets.back() + recv_counts.back()));
  e.comm.alltoallv(send.data(), send_counts, send_offsets, recv.data(), recv_counts, recv_offsets);
  // The send buffer's pages leave the process now (a large freed buffer is
  // otherwise kept for the next one), so that they do not stay resident beside
  // the receive buffer and the blocks being assembled.
  send = Buffer();
  Buffer::release_kept();
  agree_on_errors(e.comm, [&] {
    parallel(e.workers(), outputs.size(), [&](size_t n) {
      const OutputBlock& out = outputs[n];
      NDArray block = NDArray::empty(dtype, e.target.block_shape(out.index));
      for (const Incoming& p : out.pieces) {
        const Shape s(p.shape.begin(), p.shape.end());
        box_view(block, p.start, p.shape)
            .assign(NDArray(recv, dtype, s, NDArray::c_strides(s, itemsize),
                            recv_offsets[static_cast<size_t>(p.source)] + p.offset));
      }
      e.store->write_chunk(out.index, block);
    });
  });
}

// The rounds, writing into the temporary store at `tmp` that rank 0 made.
void write_all(Exchange& e, const std::string& tmp) {
  agree_on_errors(e.comm, [&] { e.store = std::make_shared<const zarr::Store>(zarr::open(tmp, Access::ReadWrite)); });
  for (size_t k = 0; k < e.plan.rounds.size(); ++k) run_round(e, e.plan.rounds[k], k);
}

}  // namespace

RechunkStoreResult rechunk_store_across(const Array& x, const Chunks& target, const std::string& path,
                                        const RechunkStoreOptions& options) {
  Communicator& comm = *options.communicator;
  // Each rank's reads and packs are a run of its own (its own blocks, its own graph).
  RechunkStoreOptions local = options;
  local.store.compute.communicator = nullptr;
  Exchange e{x, target, comm, local, {}, {}, {}, {}, {}, {}};
  Shape chunk_shape;
  const storage::PublishOptions publish = publish_options(path, options.store);
  agree_on_errors(comm, [&] {
    require_zarr_across("rechunk_store", path, publish);
    chunk_shape = regular_chunk_shape(target);
    e.plan = plan_exchange(x.chunks().sizes(), target.sizes(), static_cast<int64_t>(x.dtype().itemsize()),
                           exchange_options(options.store.compute.memory_limit, comm.size(), e.workers()));
    if (comm.rank() == 0) storage::check_target(path, publish);
  });
  e.maps = old_to_new(x.chunks().sizes(), target.sizes());
  e.old_strides = grid_strides(x.chunks().numblocks());
  e.new_strides = grid_strides(target.numblocks());
  e.token = unique_token();
  storage::publish_across(
      comm, path, publish,
      [&](const std::string& tmp) {
        (void)zarr::create(tmp, x.dtype(), x.shape(), chunk_shape, Scalar(0), options.store.zarr);
      },
      [&](const std::string& tmp) { write_all(e, tmp); });
  return {target, false};
}

}  // namespace tessera::array::detail
