// The block-level work of a rechunk and the `tasks` method's graph.
//
// The `tasks` graph of one step, for each new block J:
//   - J is one whole old block I: `(merge, J)` is an alias of `(x, I)`;
//   - fused: `(merge, J)` = rechunk_copy([(x, I) for each old block I it
//     overlaps], plan), which copies each piece straight into the new block;
//   - not fused: `(split, n)` = getitem((x, I), box) for each piece that is not
//     a whole old block (a compact copy, see box_task), then `(merge, J)` =
//     rechunk_concatenate(pieces, plan).
// A new block made of one part of one old block is that part: a view when the
// part is C-contiguous, else a copy (downstream kernels take contiguous
// blocks).

#include <algorithm>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include <absl/strings/str_cat.h>

#include "across/split_across.hpp"
#include "array/rechunk/blocks.hpp"
#include "storage/pages.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {

namespace detail {

NDArray box_view(const NDArray& a, std::span<const int64_t> start, std::span<const int64_t> shape) {
  std::vector<Slice> slices;
  slices.reserve(start.size());
  for (size_t k = 0; k < start.size(); ++k) slices.push_back(Slice{start[k], start[k] + shape[k]});
  return a.slice(slices);
}

NDArray contiguous_box(const NDArray& a, std::span<const int64_t> start, std::span<const int64_t> shape) {
  return c_contiguous(box_view(a, start, shape));
}

Feeds feeds_of(const std::vector<AxisMap>& maps, const Chunks& old_chunks) {
  Feeds feeds;
  feeds.reserve(maps.size());
  for (size_t a = 0; a < maps.size(); ++a) feeds.push_back(new_from_old_axis(maps[a], old_chunks[a].size()));
  return feeds;
}

void for_each_shard(const std::vector<AxisMap>& maps, const Feeds& feeds, std::span<const int64_t> in,
                    std::span<const int64_t> new_begin, std::span<const int64_t> new_end,
                    absl::FunctionRef<void(const Shard&)> f) {
  const size_t ndim = in.size();
  struct AxisShard {
    int64_t new_block;
    const Piece* piece;
  };
  // Per axis, what `in` gives the new blocks in range; the shards are their product.
  std::vector<std::vector<AxisShard>> axis_shards(ndim);
  std::vector<int64_t> extent(ndim);
  for (size_t a = 0; a < ndim; ++a) {
    for (int64_t j : feeds[a][static_cast<size_t>(in[a])]) {
      if (j < new_begin[a] || j >= new_end[a]) continue;
      for (const Piece& piece : maps[a][static_cast<size_t>(j)]) {
        if (piece.block == in[a]) axis_shards[a].push_back({j, &piece});
      }
    }
    extent[a] = static_cast<int64_t>(axis_shards[a].size());
  }
  Shard shard;
  shard.new_block.resize(ndim);
  shard.source_start.resize(ndim);
  shard.target_start.resize(ndim);
  shard.shape.resize(ndim);
  for_each_index(extent, [&](std::span<const int64_t> k) {
    for (size_t a = 0; a < ndim; ++a) {
      const AxisShard& s = axis_shards[a][static_cast<size_t>(k[a])];
      shard.new_block[a] = s.new_block;
      shard.source_start[a] = s.piece->start;
      shard.target_start[a] = s.piece->output_start;
      shard.shape[a] = s.piece->size();
    }
    f(shard);
  });
}

void copy_pieces(const std::vector<NDArray>& sources, const BlockAssembly& plan, const NDArray& out) {
  for (const PieceCopy& p : plan.pieces) {
    const NDArray& src = sources.at(p.source);
    if (src.dtype() != plan.dtype || src.ndim() != plan.shape.size()) {
      throw ChunkError(absl::StrCat("rechunk: expected a ", plan.dtype.name(), " block of ", plan.shape.size(),
                                    " axes, found a ", src.describe()));
    }
    box_view(out, p.output_start, p.shape).assign(box_view(src, p.source_start, p.shape));
  }
}

NDArray assemble_block(const std::vector<NDArray>& sources, const BlockAssembly& plan) {
  NDArray out(Buffer::allocate(array_nbytes(plan.dtype, plan.shape)), plan.dtype, plan.shape,
              NDArray::c_strides(plan.shape, plan.dtype.itemsize()), 0);
  copy_pieces(sources, plan, out);
  return out;
}

namespace {

// The name of a rechunk's new blocks, before the token (`rechunk-merge-TOKEN`),
// and of the pieces a run across ranks cuts for them (split_fused).
constexpr std::string_view kMergeName = "rechunk-merge-", kPieceName = "rechunk-piece-";

using Plan = std::shared_ptr<const BlockAssembly>;

Key input_key(const StepInput& x, const Intersection::Index& block) { return x.block_key(block); }

bool is_whole_block(const Chunks& old_chunks, const Intersection& piece) {
  for (size_t a = 0; a < piece.shape.size(); ++a) {
    if (piece.input_start[a] != 0 || piece.shape[a] != old_chunks[a][piece.input_block[a]]) return false;
  }
  return true;
}

// The pieces of new block `out`, in C order of their grid.
std::vector<Intersection> pieces_of(const std::vector<AxisMap>& maps, std::span<const int64_t> out) {
  std::vector<Intersection> pieces;
  for_each_intersection(maps, out, [&](const Intersection& x) { pieces.push_back(x); });
  return pieces;
}

// `name` is rechunk_copy when the sources are old blocks (fused), and
// rechunk_concatenate when they are getitem pieces.
Task assemble_task(std::string name, std::vector<Arg> sources, Plan plan) {
  std::vector<Arg> args;
  args.emplace_back(ArgList{std::move(sources)});
  args.emplace_back(Value(std::move(plan)));
  return Task::from_args(fn(std::move(name), [](const std::vector<NDArray>& blocks, const Plan& p) {
                           return assemble_block(blocks, *p);
                         }),
                         std::move(args));
}

// A task cutting the box [start, start + shape) out of `block`: a compact copy
// of it (getitem), or with `contiguous` a C-contiguous block (rechunk_view: the
// view when it is one). getitem copies where dask's makes a view: a view keeps
// its whole old block alive while the scheduler counts (and spills) only the
// piece, so under a memory limit spilling pieces would free nothing until every
// piece of a block had gone; a copy lets the old block go once it is cut up
// (and, across ranks, only the piece travels).
Task box_task(Key block, std::vector<int64_t> start, std::vector<int64_t> shape, bool contiguous) {
  return Task(fn(contiguous ? "rechunk_view" : "getitem",
                 [contiguous](const NDArray& b, const std::vector<int64_t>& s, const std::vector<int64_t>& n) {
                   return contiguous ? contiguous_box(b, s, n) : box_view(b, s, n).copy();
                 }),
              ref(std::move(block)), std::move(start), std::move(shape));
}

Task box_task(Key block, const Intersection& piece, bool contiguous) {
  return box_task(std::move(block), {piece.input_start.begin(), piece.input_start.end()},
                  {piece.shape.begin(), piece.shape.end()}, contiguous);
}

// A fused rechunk_copy task split for a run across ranks (split_across.hpp):
// a getitem per piece that is not a whole old block, keyed
// `rechunk-piece-TOKEN-J...-k` (J the new block's index, k the piece), and
// `key` concatenating them. The pieces read one block each, so placement
// runs them on their block's rank and only they travel to the new block's
// rank; their keys have no indices, so no grid share holds one back there.
// The fused task's sources are distinct old blocks: its dependencies, in order.
void split_fused(const Key& key, const Task& task, Graph& out) {
  const Value* literal = task.args().size() == 2 ? task.args()[1].literal() : nullptr;
  if (literal == nullptr || !literal->is<Plan>()) return;  // not rechunk's: leave it whole
  const BlockAssembly& fused = *literal->as<Plan>();
  const std::vector<Key>& sources = task.dependencies();
  std::string prefix(key.name());
  if (prefix.starts_with(kMergeName)) prefix.replace(0, kMergeName.size(), kPieceName);
  for (int64_t j : key.index()) absl::StrAppend(&prefix, "-", j);
  auto plan = std::make_shared<BlockAssembly>(fused);
  std::vector<Arg> args;
  for (size_t k = 0; k < plan->pieces.size(); ++k) {
    PieceCopy& p = plan->pieces[k];
    const Key& block = sources.at(p.source);
    p.source = args.size();
    if (p.whole) {
      args.emplace_back(ref(block));
      continue;
    }
    const Key piece(absl::StrCat(prefix, "-", k));
    out.put(piece,
            box_task(block, {p.source_start.begin(), p.source_start.end()}, {p.shape.begin(), p.shape.end()}, false));
    args.emplace_back(ref(piece));
    p.source_start.assign(p.shape.size(), 0);  // the getitem already cut the box
  }
  out.put(key, assemble_task("rechunk_concatenate", std::move(args), std::move(plan)));
}

// Whether new block `out` is made by one fused task: it holds the whole old
// blocks of `pieces` and the new block at once. (Each is at most the array's
// bytes, below 2^63, so their sum fits in a size_t.)
bool fused_fits(const StepInput& x, const Chunks& chunks, std::span<const int64_t> out,
                const std::vector<Intersection>& pieces, const RechunkOptions& options) {
  if (!options.fuse) return false;
  if (options.fused_task_limit <= 0) return true;
  size_t held = array_nbytes(x.dtype, chunks.block_shape({out.begin(), out.end()}));
  for (const Intersection& p : pieces) {
    held += array_nbytes(x.dtype, x.chunks.block_shape({p.input_block.begin(), p.input_block.end()}));
  }
  return held <= static_cast<size_t>(options.fused_task_limit);
}

[[maybe_unused]] const bool split_registered = tessera::detail::register_split_for_ranks("rechunk_copy", &split_fused);

}  // namespace

Step tasks_layer(const StepInput& x, const Chunks& chunks, const RechunkOptions& options, const std::string& token) {
  const std::string merge = std::string(kMergeName) + token;
  const std::string split = "rechunk-split-" + token;
  const std::vector<AxisMap> maps = old_to_new(x.chunks.sizes(), chunks.sizes());
  Graph layer;
  int64_t splits = 0;
  for_each_block(chunks, [&](std::span<const int64_t> out) {
    const Key key(merge, out);
    std::vector<Intersection> pieces = pieces_of(maps, out);
    const bool fuse = fused_fits(x, chunks, out, pieces, options);
    if (pieces.size() == 1) {
      const Intersection& p = pieces.front();
      if (is_whole_block(x.chunks, p)) {
        layer.alias(key, input_key(x, p.input_block));
      } else if (fuse) {
        layer.put(key, box_task(input_key(x, p.input_block), p, true));
      } else {
        const Key s(split, {splits++});
        layer.put(s, box_task(input_key(x, p.input_block), p, true));
        layer.alias(key, s);
      }
      return;
    }
    auto plan = std::make_shared<BlockAssembly>();
    plan->dtype = x.dtype;
    plan->shape = chunks.block_shape({out.begin(), out.end()});
    std::vector<Arg> sources;
    for (const Intersection& p : pieces) {
      PieceCopy copy{sources.size(), {p.input_start.begin(), p.input_start.end()},
                     {p.output_start.begin(), p.output_start.end()}, {p.shape.begin(), p.shape.end()},
                     is_whole_block(x.chunks, p)};
      if (fuse || copy.whole) {
        sources.emplace_back(ref(input_key(x, p.input_block)));
      } else {
        const Key s(split, {splits++});
        layer.put(s, box_task(input_key(x, p.input_block), p, false));
        sources.emplace_back(ref(s));
        copy.source_start.assign(p.shape.size(), 0);  // the getitem already cut the box
      }
      plan->pieces.push_back(std::move(copy));
    }
    layer.put(key, assemble_task(fuse ? "rechunk_copy" : "rechunk_concatenate", std::move(sources), std::move(plan)));
  });
  return {merge, std::move(layer)};
}

Step empty_layer(const StepInput& x, const Chunks& chunks, const std::string& token) {
  const std::string name = std::string(kMergeName) + token;
  Graph layer;
  const DType dtype = x.dtype;
  for_each_block(chunks, [&](std::span<const int64_t> out) {
    layer.put(Key(name, out), Task(fn("rechunk_empty", [dtype](const std::vector<int64_t>& shape) {
                                     return NDArray::empty(dtype, shape);
                                   }),
                                   chunks.block_shape({out.begin(), out.end()})));
  });
  return {name, std::move(layer)};
}

std::string PlannedStep::label(const RechunkOptions& options) const {
  if (empty) return "empty";
  if (method == RechunkMethod::shuffle) return options.disk ? "shuffle-disk" : "shuffle-memory";
  return options.fuse ? "tasks-fused" : "tasks";
}

// The chunkings a `tasks` rechunk goes through: dask's plan under
// block_size_limit. Under a task limit (fused_task_limit: the run's memory
// limit), a block made from pieces is held twice at once (the concatenate's
// pieces and its block; a getitem's old block and its piece) while the run
// holds other results: intermediate blocks are kept to a quarter of the limit
// or less, so that such a task takes at most half of it (at half, the 2-D
// FFT's 128 MiB merges under a 256 MiB limit needed all of it and a little
// more, and the run refused them). Each step moves the whole array once
// (across ranks, through the network), and the number of steps does not fall
// with the bound (the FFT's spectrum, 32 MiB blocks of rows to columns: 3 steps
// at 128 MiB, 4 at 64, 3 at 32): bounds from the quarter down are tried,
// halving, down to the largest old or new block (below it the plan is the same),
// and the plan with the fewest steps wins, the larger bound among equals.
static std::vector<ChunkSizes> tasks_plan(const StepInput& x, const Chunks& target, const RechunkOptions& options) {
  const auto itemsize = static_cast<int64_t>(x.dtype.itemsize());
  const auto plan = [&](int64_t bound) {
    return plan_rechunk(x.chunks.sizes(), target.sizes(), itemsize,
                        {.block_size_limit = bound, .threshold = options.threshold});
  };
  if (options.fused_task_limit <= 0) return plan(options.block_size_limit);
  const int64_t floor = itemsize * std::max(largest_block_size(x.chunks.sizes()), largest_block_size(target.sizes()));
  int64_t bound = std::max<int64_t>(std::min(options.block_size_limit, options.fused_task_limit / 4), 1);
  std::vector<ChunkSizes> best = plan(bound);
  while (bound > floor && best.size() > 1) {
    bound = std::max(bound / 2, floor);
    std::vector<ChunkSizes> p = plan(bound);
    if (p.size() < best.size()) best = std::move(p);
  }
  return best;
}

std::vector<PlannedStep> plan_steps(const StepInput& x, const Chunks& target, const RechunkOptions& options) {
  if (target == x.chunks) return {};
  int64_t size = 1;
  for (int64_t e : x.chunks.shape()) size *= e;
  if (size == 0) return {PlannedStep{target, RechunkMethod::tasks, true}};
  RechunkMethod method = options.method;
  if (method == RechunkMethod::automatic) {
    method = choose_rechunk_method(x.chunks.sizes(), target.sizes(), options.threshold);
    // The disk shuffle writes shards into a mapped scratch file and hands the
    // pages back shard by shard. Shards whose runs are shorter than a page
    // share their pages with other shards, and each one faults them in and out
    // again (32^3 chunks to whole slices ran many times slower than tasks).
    const auto itemsize = static_cast<int64_t>(x.dtype.itemsize());
    const auto page = static_cast<int64_t>(tessera::detail::page_size());
    if (method == RechunkMethod::shuffle && options.disk &&
        mean_shard_run_bytes(x.chunks.sizes(), target.sizes(), itemsize) < page) {
      method = RechunkMethod::tasks;
    }
  }
  if (method == RechunkMethod::shuffle) return {PlannedStep{target, method}};
  std::vector<PlannedStep> steps;
  for (ChunkSizes& sizes : tasks_plan(x, target, options)) {
    steps.push_back({Chunks(std::move(sizes)), RechunkMethod::tasks});
  }
  return steps;
}

Step make_layer(const StepInput& x, const PlannedStep& step, const RechunkOptions& options, const std::string& token) {
  if (step.empty) return empty_layer(x, step.chunks, token);
  if (step.method == RechunkMethod::shuffle) return shuffle_layer(x, step.chunks, options, token);
  return tasks_layer(x, step.chunks, options, token);
}

}  // namespace detail

}  // namespace tessera::array
