// rechunk on Arrays: the target's resolution, the choice of method, the steps.
#include <algorithm>
#include <string>
#include <utility>

#include <absl/strings/str_cat.h>

#include "array/rechunk/blocks.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {

RechunkSpec::RechunkSpec(const std::map<size_t, AxisChunks>& by_axis) {
  for (const auto& [axis, chunks] : by_axis) by_axis_.emplace(axis, RechunkAxis(chunks));
}

RechunkSpec::RechunkSpec(const std::map<size_t, RechunkAxis>& by_axis) : by_axis_(by_axis) {}

Chunks RechunkSpec::resolve(const Chunks& old_chunks, DType dtype, int64_t limit_bytes) const {
  const Shape shape = old_chunks.shape();
  if (spec_) return normalize_chunks(*spec_, shape, dtype, limit_bytes);
  std::vector<RechunkAxis> axes = axes_;
  if (!per_axis_) {
    axes.assign(old_chunks.ndim(), RechunkAxis(keep));
    for (const auto& [axis, target] : by_axis_) {
      if (axis >= old_chunks.ndim()) {
        throw ChunkError(
            absl::StrCat("rechunk: expected axes below ", old_chunks.ndim(), " in the per-axis map, found ", axis));
      }
      axes[axis] = target;
    }
  }
  if (axes.size() != old_chunks.ndim()) {
    throw ChunkError(absl::StrCat("rechunk: expected chunks for ", old_chunks.ndim(), " axes, found ", axes.size()));
  }
  std::vector<AxisChunks> resolved;
  resolved.reserve(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) {
    resolved.push_back(axes[a].target() ? *axes[a].target() : AxisChunks(old_chunks[a]));
  }
  return normalize_chunks(ChunkSpec(std::move(resolved)), shape, dtype, limit_bytes);
}


Array rechunk(const Array& x, const RechunkSpec& chunks, const RechunkOptions& options) {
  const Chunks target = chunks.resolve(x.chunks(), x.dtype(), options.block_size_limit);
  Array y = x;
  for (const detail::PlannedStep& s : detail::plan_steps({x.name(), x.chunks(), x.dtype()}, target, options)) {
    const detail::StepInput input{y.name(), y.chunks(), y.dtype()};
    const std::string tok = token({"rechunk", y.name(), s.chunks.str(), s.label(options)});
    detail::Step layer = detail::make_layer(input, s, options, tok);
    y = Array(std::move(layer.name), s.chunks, y.dtype(), std::move(layer.layer), {y});
  }
  return y;
}

}  // namespace tessera::array
