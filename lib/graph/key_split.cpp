// dask.utils.key_split, rule for rule (the header lists them); dask returns
// "Other" where its code raises, which here is only an empty name.
#include "tessera/graph/key_split.hpp"

#include <algorithm>
#include <vector>

#include <absl/strings/ascii.h>

namespace tessera {
namespace {

bool all_alpha(std::string_view w) {
  return !w.empty() &&
         std::all_of(w.begin(), w.end(), [](char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)); });
}

bool is_hex(std::string_view w) {
  return std::all_of(w.begin(), w.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::string key_split(std::string_view name) {
  if (name.empty()) return "Other";
  std::vector<std::string_view> words;
  for (size_t from = 0;;) {
    const size_t dash = name.find('-', from);
    words.push_back(name.substr(from, dash == std::string_view::npos ? std::string_view::npos : dash - from));
    if (dash == std::string_view::npos) break;
    from = dash + 1;
  }
  std::string result;
  if (words[0].empty()) return "Other";  // dask: words[0][0] raises IndexError
  if (!absl::ascii_isalpha(static_cast<unsigned char>(words[0][0]))) {
    std::string_view first = words[0].substr(0, words[0].find(','));
    const std::string_view strip = "_'()\"";
    while (!first.empty() && strip.find(first.front()) != std::string_view::npos) first.remove_prefix(1);
    while (!first.empty() && strip.find(first.back()) != std::string_view::npos) first.remove_suffix(1);
    result = std::string(first);
  } else {
    result = std::string(words[0]);
  }
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string_view w = words[i];
    // dask: hex_pattern.match(word), a match of [a-f]+ at the start.
    const bool short_token = w.size() == 8 && w[0] >= 'a' && w[0] <= 'f';
    if (!all_alpha(w) || short_token) break;
    result += '-';
    result += w;
  }
  if (result.size() == 32 && is_hex(result)) return "data";
  if (!result.empty() && result[0] == '<') {
    std::string_view r = result;
    while (!r.empty() && (r.front() == '<' || r.front() == '>')) r.remove_prefix(1);
    while (!r.empty() && (r.back() == '<' || r.back() == '>')) r.remove_suffix(1);
    r = r.substr(0, r.find_first_of(" \t\n"));
    const size_t dot = r.rfind('.');
    if (dot != std::string_view::npos) r.remove_prefix(dot + 1);
    return std::string(r);
  }
  if (result.empty()) return "Other";  // dask: result[0] raises IndexError
  return result;
}

std::string key_label(const Key& key) {
  std::string label = key_split(key);
  if (!key.is_tuple()) return label;
  label += " (";
  for (size_t a = 0; a < key.index().size(); ++a) {
    if (a > 0) label += ", ";
    label += std::to_string(key.index()[a]);
  }
  return label + ")";
}

}  // namespace tessera
