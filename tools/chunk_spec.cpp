#include "chunk_spec.hpp"

#include <charconv>
#include <cstdint>
#include <string_view>

#include "command.hpp"

namespace tessera::tool {
namespace {

// A short, quoted prefix of a value typed by the user.
std::string quoted(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMax)) + "...' (" + std::to_string(text.size()) + " characters)";
}

// `problem`, after `option: ` unless `option` is empty (CLI11 puts the name in front itself).
std::string named(const std::string& option, const std::string& problem) {
  return option.empty() ? problem : option + ": " + problem;
}

array::RechunkAxis parse_axis(std::string_view item, const std::string& option) {
  if (item == "keep") return array::keep;
  if (item == "auto") return "auto";
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
  if (ec != std::errc() || end != item.data() + item.size() || item.empty()) {
    throw UsageError(named(option, "expected a block size, -1, auto or keep per axis, found " + quoted(item)));
  }
  if (n == 0 || n < -1) {
    throw UsageError(
        named(option, "expected a block size of at least 1 (or -1 for the whole axis), found " + quoted(item)));
  }
  return n;
}

}  // namespace

std::vector<array::RechunkAxis> parse_chunks(const std::string& text, const std::string& option) {
  std::vector<array::RechunkAxis> axes;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    axes.push_back(parse_axis(std::string_view(text).substr(begin, comma - begin), option));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return axes;
}

void check_chunks_fit(const std::vector<array::RechunkAxis>& axes, size_t ndim, const std::string& option) {
  if (axes.size() != ndim) {
    throw UsageError(named(option, "expected one entry per axis of SRC (" + std::to_string(ndim) + "), found " +
                                         std::to_string(axes.size())));
  }
}

}  // namespace tessera::tool
