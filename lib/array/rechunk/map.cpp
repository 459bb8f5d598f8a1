// The per-axis maps of a rechunk, their n-D product and the partials.
//
// Everything here works one axis at a time; the n-D views (the pieces of one
// output block, the partials) are products of per-axis results built on demand.
#include <algorithm>
#include <cstdint>
#include <string>

#include "tessera/array/core/grid.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {

namespace {

std::string sizes_str(std::span<const int64_t> sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + (sizes.size() == 1 ? ",)" : ")");
}

int64_t checked_total(std::span<const int64_t> sizes, const char* which) {
  if (sizes.empty()) {
    throw ChunkError(std::string("rechunk: expected at least one block per axis in the ") + which +
                     " chunks, found none");
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) {
      throw ChunkError(std::string("rechunk: expected block sizes >= 0 in the ") + which +
                       " chunks, found " + sizes_str(sizes));
    }
    total += s;
  }
  return total;
}

}  // namespace

AxisMap old_to_new_axis(std::span<const int64_t> old_chunks, std::span<const int64_t> new_chunks) {
  const int64_t old_total = checked_total(old_chunks, "input");
  const int64_t new_total = checked_total(new_chunks, "output");
  if (old_total != new_total) {
    throw ChunkError("rechunk: the output chunks " + sizes_str(new_chunks) + " add up to " +
                     std::to_string(new_total) + ", expected the axis length " +
                     std::to_string(old_total) + " of the input chunks " + sizes_str(old_chunks));
  }
  const auto n_old = static_cast<int64_t>(old_chunks.size());
  AxisMap map(new_chunks.size());
  int64_t i = 0;          // first input block that ends after `begin`
  int64_t old_begin = 0;  // where input block i starts
  int64_t begin = 0;      // where the current output block starts
  for (size_t j = 0; j < new_chunks.size(); ++j) {
    const int64_t end = begin + new_chunks[j];
    while (i < n_old && old_begin + old_chunks[i] <= begin) old_begin += old_chunks[i++];
    if (begin == end) {
      // A zero-size output block reads an empty slice of the block at its
      // position, or of the last block at the end of the axis.
      if (i < n_old) {
        map[j].push_back({i, begin - old_begin, begin - old_begin, 0});
      } else {
        map[j].push_back({n_old - 1, old_chunks[n_old - 1], old_chunks[n_old - 1], 0});
      }
      continue;
    }
    int64_t k = i;
    int64_t k_begin = old_begin;
    while (k_begin < end) {
      const int64_t k_end = k_begin + old_chunks[k];
      if (k_end > begin && k_end > k_begin) {
        const int64_t lo = std::max(begin, k_begin);
        const int64_t hi = std::min(end, k_end);
        map[j].push_back({k, lo - k_begin, hi - k_begin, lo - begin});
      }
      k_begin = k_end;
      ++k;
    }
    begin = end;
  }
  return map;
}

std::vector<AxisMap> old_to_new(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks) {
  if (old_chunks.size() != new_chunks.size()) {
    throw ChunkError("rechunk: expected output chunks for " + std::to_string(old_chunks.size()) +
                     " axes, found " + std::to_string(new_chunks.size()));
  }
  std::vector<AxisMap> maps;
  maps.reserve(old_chunks.size());
  for (size_t a = 0; a < old_chunks.size(); ++a) {
    try {
      maps.push_back(old_to_new_axis(old_chunks[a], new_chunks[a]));
    } catch (const ChunkError& e) {
      throw ChunkError("axis " + std::to_string(a) + ": " + e.what());
    }
  }
  return maps;
}

std::vector<std::vector<int64_t>> new_from_old_axis(const AxisMap& map, size_t old_blocks) {
  std::vector<std::vector<int64_t>> inverse(old_blocks);
  for (size_t j = 0; j < map.size(); ++j) {
    for (const Piece& p : map[j]) {
      auto& feeds = inverse.at(static_cast<size_t>(p.block));
      if (feeds.empty() || feeds.back() != static_cast<int64_t>(j)) feeds.push_back(static_cast<int64_t>(j));
    }
  }
  return inverse;
}

Intersection::Index piece_grid(const std::vector<AxisMap>& maps, std::span<const int64_t> output_block) {
  Intersection::Index grid(maps.size());
  for (size_t a = 0; a < maps.size(); ++a) {
    grid[a] = static_cast<int64_t>(maps[a].at(static_cast<size_t>(output_block[a])).size());
  }
  return grid;
}

void for_each_intersection(const std::vector<AxisMap>& maps, std::span<const int64_t> output_block,
                           FunctionRef<void(const Intersection&)> visit) {
  const size_t ndim = maps.size();
  if (output_block.size() != ndim) {
    throw ChunkError("rechunk: expected an output block index of " + std::to_string(ndim) +
                     " axes, found " + std::to_string(output_block.size()));
  }
  const Intersection::Index grid = piece_grid(maps, output_block);
  Intersection x;
  x.input_block.resize(ndim);
  x.input_start.resize(ndim);
  x.output_start.resize(ndim);
  x.shape.resize(ndim);
  for_each_index(grid, [&](std::span<const int64_t> position) {
    x.position.assign(position.begin(), position.end());
    for (size_t a = 0; a < ndim; ++a) {
      const Piece& p = maps[a][static_cast<size_t>(output_block[a])][static_cast<size_t>(position[a])];
      x.input_block[a] = p.block;
      x.input_start[a] = p.start;
      x.output_start[a] = p.output_start;
      x.shape[a] = p.size();
    }
    visit(x);
  });
}

std::vector<AxisPartial> partials_axis(const AxisMap& map) {
  std::vector<AxisPartial> out;
  for (size_t j = 0; j < map.size(); ++j) {
    const int64_t first = map[j].front().block;
    const int64_t last = map[j].back().block;
    const auto jj = static_cast<int64_t>(j);
    if (!out.empty() && out.back().old_end - 1 == last) {
      out.back().new_end = jj + 1;
    } else {
      out.push_back({first, last + 1, jj, jj + 1});
    }
  }
  return out;
}

std::vector<std::vector<AxisPartial>> partials(const std::vector<AxisMap>& maps) {
  std::vector<std::vector<AxisPartial>> out;
  out.reserve(maps.size());
  for (const AxisMap& m : maps) out.push_back(partials_axis(m));
  return out;
}

int64_t number_of_blocks(const ChunkSizes& chunks) {
  int64_t n = 1;
  for (const auto& axis : chunks) n *= static_cast<int64_t>(axis.size());
  return n;
}

int64_t largest_block_size(const ChunkSizes& chunks) {
  int64_t n = 1;
  for (const auto& axis : chunks) n *= axis.empty() ? 0 : *std::max_element(axis.begin(), axis.end());
  return n;
}

int64_t count_intersections(const std::vector<AxisMap>& maps) {
  int64_t n = 1;
  for (const AxisMap& m : maps) {
    int64_t pieces = 0;
    for (const auto& block : m) pieces += static_cast<int64_t>(block.size());
    n *= pieces;
  }
  return n;
}

int64_t rechunk_graph_nbytes(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks) {
  const std::vector<AxisMap> maps = old_to_new(old_chunks, new_chunks);
  // In double: a hostile grid's counts overflow int64 when multiplied.
  double old_blocks = 1, new_blocks = 1, pieces = 1;
  for (size_t a = 0; a < maps.size(); ++a) {
    old_blocks *= static_cast<double>(old_chunks[a].size());
    new_blocks *= static_cast<double>(new_chunks[a].size());
    double axis_pieces = 0;
    for (const auto& block : maps[a]) axis_pieces += static_cast<double>(block.size());
    pieces *= axis_pieces;
  }
  const double bytes = (old_blocks + 2 * new_blocks) * static_cast<double>(kGraphBytesPerTask) +
                       pieces * static_cast<double>(kGraphBytesPerPiece);
  return bytes >= 0x1p63 ? INT64_MAX : static_cast<int64_t>(bytes);
}

int64_t estimate_graph_size(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks) {
  int64_t n = 1;
  for (size_t a = 0; a < old_chunks.size(); ++a) {
    const auto& o = old_chunks[a];
    const auto& c = new_chunks[a];
    n *= o == c ? static_cast<int64_t>(o.size()) : static_cast<int64_t>(o.size() + c.size()) - 1;
  }
  return n;
}

}  // namespace tessera::array
