// Which store targets are HDF5 datasets ("FILE.h5:/group/x"): built with or without libhdf5.
#include <cstring>

#include "tessera/array/io/hdf5.hpp"

namespace tessera::array::hdf5 {
namespace detail {

std::string absolute(const std::string& dataset) {
  std::string out = "/";
  for (char c : dataset) {
    if (c == '/' && out.back() == '/') continue;
    out.push_back(c);
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace detail

std::optional<std::pair<std::string, std::string>> split_target(const std::string& path) {
  for (const char* ext : {".h5:", ".hdf5:", ".he5:", ".nc:", ".nc4:"}) {
    const size_t at = path.rfind(ext);
    if (at == std::string::npos) continue;
    const size_t colon = at + std::strlen(ext) - 1;
    const std::string dataset = path.substr(colon + 1);
    if (dataset.empty() || detail::absolute(dataset) == "/") continue;
    return std::make_pair(path.substr(0, colon), detail::absolute(dataset));
  }
  return std::nullopt;
}

std::string file_of(const std::string& path) {
  const auto target = split_target(path);
  return target ? target->first : path;
}

}  // namespace tessera::array::hdf5
