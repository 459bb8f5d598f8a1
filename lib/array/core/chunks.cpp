#include "tessera/array/core/chunks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include <absl/strings/ascii.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "tessera/graph/error.hpp"

namespace tessera::array {
namespace {

std::string sizes_str(const std::vector<int64_t>& sizes) {
  return sizes.size() == 1 ? absl::StrCat("(", sizes[0], ",)") : absl::StrCat("(", absl::StrJoin(sizes, ", "), ")");
}

// Blocks of `size` along an axis of `length`, the last one shorter.
std::vector<int64_t> regular_sizes(int64_t size, int64_t length) {
  if (length == 0) return {0};
  std::vector<int64_t> out(static_cast<size_t>(length / size), size);
  if (length % size != 0) out.push_back(length % size);
  return out;
}

void check_positive_size(int64_t size, size_t axis) {
  if (size == 0 || size < -1) {
    throw ChunkError(absl::StrCat("chunks of axis ", axis, ": expected a positive block size, -1 or none "
                                  "for the whole axis, found ", size));
  }
}

// Sizes for one axis that is not "auto".
std::vector<int64_t> axis_sizes(const AxisChunks& spec, size_t axis, int64_t length) {
  switch (spec.kind()) {
    case AxisChunks::Kind::Whole:
    case AxisChunks::Kind::Auto:  // resolved by the caller
      return {length};
    case AxisChunks::Kind::Size:
      check_positive_size(spec.size(), axis);
      return spec.size() == -1 ? std::vector<int64_t>{length} : regular_sizes(spec.size(), length);
    case AxisChunks::Kind::Explicit:
      break;
  }
  const std::vector<int64_t>& sizes = spec.sizes();
  if (sizes.empty()) {
    throw ChunkError(absl::StrCat("chunks of axis ", axis, ": expected block sizes adding up to ", length,
                                  ", found an empty list"));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s <= 0 && !(s == 0 && length == 0 && sizes.size() == 1)) {
      throw ChunkError(absl::StrCat("chunks of axis ", axis, ": expected positive block sizes, found ", s, " in ",
                                    sizes_str(sizes)));
    }
    total += s;
  }
  if (total != length) {
    throw ChunkError(absl::StrCat("chunks of axis ", axis, ": ", sizes_str(sizes), " add up to ", total,
                                  ", expected the axis's length ", length));
  }
  return sizes;
}

int64_t largest(const std::vector<int64_t>& sizes) { return *std::max_element(sizes.begin(), sizes.end()); }

// One block size for every auto axis so that a block of `itemsize` bytes holds at most `limit`
// bytes, given the largest blocks of the fixed axes. An axis shorter than the size is taken
// whole, which leaves more room for the others, so the size is recomputed without it.
void resolve_auto(std::vector<std::vector<int64_t>>& out, std::vector<size_t> autos, const Shape& shape,
                  size_t itemsize, int64_t limit) {
  double fixed = 1;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (std::find(autos.begin(), autos.end(), a) == autos.end()) fixed *= std::max<int64_t>(1, largest(out[a]));
  }
  while (!autos.empty()) {
    double elements = std::max(1.0, static_cast<double>(limit) / static_cast<double>(itemsize) / fixed);
    double size = std::pow(elements, 1.0 / static_cast<double>(autos.size()));
    std::vector<size_t> rest;
    for (size_t a : autos) {
      if (static_cast<double>(shape[a]) < size) {
        out[a] = {shape[a]};
        fixed *= std::max<int64_t>(1, shape[a]);
      } else {
        rest.push_back(a);
      }
    }
    if (rest.size() == autos.size()) {
      // Slightly above the exact root for floating error, then floor: 4096.0000001 -> 4096.
      int64_t s = std::max<int64_t>(1, static_cast<int64_t>(std::floor(size * (1 + 1e-12))));
      for (size_t a : rest) out[a] = regular_sizes(s, shape[a]);
      return;
    }
    autos = std::move(rest);
  }
}

}  // namespace

// ---- Chunks ----

Chunks::Chunks(std::vector<std::vector<int64_t>> sizes) : sizes_(std::move(sizes)) {
  offsets_.reserve(sizes_.size());
  for (size_t axis = 0; axis < sizes_.size(); ++axis) {
    const auto& s = sizes_[axis];
    if (s.empty()) throw ChunkError(absl::StrCat("chunks of axis ", axis, ": expected block sizes, found none"));
    std::vector<int64_t> off{0};
    off.reserve(s.size() + 1);
    for (int64_t x : s) {
      if (x < 0 || (x == 0 && s.size() > 1)) {
        throw ChunkError(absl::StrCat("chunks of axis ", axis, ": expected positive block sizes (or (0,) for an "
                                      "empty axis), found ", x, " in ", sizes_str(s)));
      }
      off.push_back(off.back() + x);
    }
    offsets_.push_back(std::move(off));
  }
}

Shape Chunks::shape() const {
  Shape out;
  out.reserve(ndim());
  for (const auto& off : offsets_) out.push_back(off.back());
  return out;
}

std::vector<int64_t> Chunks::numblocks() const {
  std::vector<int64_t> out;
  for (const auto& s : sizes_) out.push_back(static_cast<int64_t>(s.size()));
  return out;
}

int64_t Chunks::total_blocks() const {
  int64_t n = 1;
  for (const auto& s : sizes_) n *= static_cast<int64_t>(s.size());
  return n;
}

int64_t Chunks::block_of(size_t axis, int64_t index) const {
  const auto& off = offsets_.at(axis);
  if (index < 0 || index >= off.back()) {
    throw ChunkError(absl::StrCat("index ", index, " is outside axis ", axis, " of length ", off.back()));
  }
  return std::upper_bound(off.begin(), off.end(), index) - off.begin() - 1;
}

static void check_block(const Chunks& c, const std::vector<int64_t>& block) {
  if (block.size() != c.ndim()) {
    throw ChunkError(absl::StrCat("block index has ", block.size(), " entries, expected ", c.ndim()));
  }
  for (size_t a = 0; a < block.size(); ++a) {
    if (block[a] < 0 || block[a] >= c.numblocks(a)) {
      throw ChunkError(absl::StrCat("block index ", block[a], " of axis ", a, " is out of range: the axis has ",
                                    c.numblocks(a), " blocks"));
    }
  }
}

Shape Chunks::block_offset(const std::vector<int64_t>& block) const {
  check_block(*this, block);
  Shape out;
  for (size_t a = 0; a < block.size(); ++a) out.push_back(offsets_[a][block[a]]);
  return out;
}

Shape Chunks::block_shape(const std::vector<int64_t>& block) const {
  check_block(*this, block);
  Shape out;
  for (size_t a = 0; a < block.size(); ++a) out.push_back(sizes_[a][block[a]]);
  return out;
}

Shape Chunks::max_block_shape() const {
  Shape out;
  for (const auto& s : sizes_) out.push_back(largest(s));
  return out;
}

std::string Chunks::str() const {
  std::vector<std::string> axes;
  for (const auto& s : sizes_) axes.push_back(sizes_str(s));
  return sizes_.size() == 1 ? absl::StrCat("(", axes[0], ",)") : absl::StrCat("(", absl::StrJoin(axes, ", "), ")");
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "()";
  return sizes_str(shape);
}

// ---- specifications ----

AxisChunks::AxisChunks(int64_t size) : kind_(Kind::Size), size_(size) {}
AxisChunks::AxisChunks(std::nullopt_t) : kind_(Kind::Whole) {}
AxisChunks::AxisChunks(const char* text) : AxisChunks(std::string(text)) {}
AxisChunks::AxisChunks(const std::string& text) : kind_(Kind::Auto) {
  if (text != "auto") {
    throw ChunkError(absl::StrCat("chunks: expected \"auto\", a block size, -1 or none for an axis, found \"",
                                  text, "\""));
  }
}
AxisChunks::AxisChunks(std::vector<int64_t> sizes) : kind_(Kind::Explicit), sizes_(std::move(sizes)) {}

ChunkSpec::ChunkSpec(int64_t size_for_all) : form_(Form::All), axes_{AxisChunks(size_for_all)} {}
ChunkSpec::ChunkSpec(const char* text) : ChunkSpec(std::string(text)) {}
ChunkSpec::ChunkSpec(const std::string& text) : form_(Form::All), axes_{AxisChunks(std::nullopt)} {
  if (text == "auto") {
    axes_ = {AxisChunks("auto")};
    return;
  }
  form_ = Form::Limit;
  try {
    limit_ = parse_bytes(text);
  } catch (const ChunkError&) {
    throw ChunkError(absl::StrCat("chunks: expected \"auto\", a byte size such as \"64 MiB\", a block size or "
                                  "sizes per axis, found \"", text, "\""));
  }
}
ChunkSpec::ChunkSpec(std::initializer_list<AxisChunks> axes) : form_(Form::PerAxis), axes_(axes) {}
ChunkSpec::ChunkSpec(std::vector<AxisChunks> axes) : form_(Form::PerAxis), axes_(std::move(axes)) {}
ChunkSpec::ChunkSpec(const std::vector<std::vector<int64_t>>& sizes) : form_(Form::PerAxis) {
  for (const auto& s : sizes) axes_.emplace_back(s);
}
ChunkSpec::ChunkSpec(const Chunks& chunks) : ChunkSpec(chunks.sizes()) {}
ChunkSpec::ChunkSpec(std::map<size_t, AxisChunks> by_axis) : form_(Form::ByAxis), by_axis_(std::move(by_axis)) {}

Chunks normalize_chunks(const ChunkSpec& spec, const Shape& shape, std::optional<DType> dtype,
                        int64_t limit_bytes) {
  const size_t n = shape.size();
  for (size_t a = 0; a < n; ++a) {
    if (shape[a] < 0) throw ChunkError(absl::StrCat("shape ", shape_str(shape), " has a negative extent"));
  }
  std::vector<AxisChunks> axes;
  switch (spec.form_) {
    case ChunkSpec::Form::All:
      axes.assign(n, spec.axes_.front());
      break;
    case ChunkSpec::Form::Limit:
      axes.assign(n, AxisChunks("auto"));
      limit_bytes = spec.limit_;
      break;
    case ChunkSpec::Form::PerAxis:
      if (spec.axes_.size() != n) {
        throw ChunkError(absl::StrCat("chunks: expected one entry per axis of the array of shape ", shape_str(shape),
                                      " (", n, " axes), found ", spec.axes_.size()));
      }
      axes = spec.axes_;
      break;
    case ChunkSpec::Form::ByAxis:
      axes.assign(n, AxisChunks(std::nullopt));
      for (const auto& [axis, a] : spec.by_axis_) {
        if (axis >= n) {
          throw ChunkError(absl::StrCat("chunks: axis ", axis, " named, but the array of shape ", shape_str(shape),
                                        " has ", n, " axes"));
        }
        axes[axis] = a;
      }
      break;
  }
  std::vector<std::vector<int64_t>> out(n);
  std::vector<size_t> autos;
  for (size_t a = 0; a < n; ++a) {
    out[a] = axis_sizes(axes[a], a, shape[a]);
    if (axes[a].kind() == AxisChunks::Kind::Auto) autos.push_back(a);
  }
  if (!autos.empty()) {
    if (!dtype) throw ChunkError("chunks: \"auto\" needs the array's dtype to size blocks in bytes");
    if (limit_bytes <= 0) throw ChunkError(absl::StrCat("chunks: expected a positive byte limit, found ", limit_bytes));
    resolve_auto(out, std::move(autos), shape, dtype->itemsize(), limit_bytes);
  }
  return Chunks(std::move(out));
}

int64_t parse_bytes(std::string_view text) {
  std::string s(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  size_t split = 0;
  while (split < s.size() && (std::isdigit(static_cast<unsigned char>(s[split])) || s[split] == '.' ||
                              s[split] == 'e' || s[split] == 'E' || s[split] == '+' || s[split] == '-')) {
    ++split;
  }
  std::string number = s.substr(0, split);
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(s.substr(split)));
  double value = 0;
  if (number.empty() || !absl::SimpleAtod(number, &value)) {
    throw ChunkError(absl::StrCat("expected a byte size such as \"128 MiB\", found \"", std::string(text), "\""));
  }
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},          {"b", 1},         {"kb", 1e3},           {"mb", 1e6},          {"gb", 1e9},
      {"tb", 1e12},     {"kib", 1 << 10}, {"mib", 1 << 20},      {"gib", 1 << 30},     {"tib", 1099511627776.0},
      {"k", 1e3},       {"m", 1e6},       {"g", 1e9},            {"t", 1e12}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      double bytes = value * scale;
      if (!(bytes >= 1 && bytes < 9.2e18)) {
        throw ChunkError(absl::StrCat("expected a positive byte size, found \"", std::string(text), "\""));
      }
      return static_cast<int64_t>(bytes);
    }
  }
  throw ChunkError(absl::StrCat("unknown unit \"", unit, "\" in byte size \"", std::string(text),
                                "\": expected B, kB, MB, GB, TB, KiB, MiB, GiB or TiB"));
}

Shape regular_chunk_shape(const Chunks& chunks) {
  Shape chunk;
  for (size_t k = 0; k < chunks.ndim(); ++k) {
    const auto& sizes = chunks[k];
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      if (sizes[i] != sizes[0] || sizes.back() > sizes[0]) {
        throw ChunkError(absl::StrCat("store to zarr needs regular chunks (equal blocks but a smaller last one), "
                                      "found ", chunks.str(), " along axis ", k, "; rechunk first"));
      }
    }
    chunk.push_back(std::max<int64_t>(sizes[0], 1));
  }
  return chunk;
}

}  // namespace tessera::array
