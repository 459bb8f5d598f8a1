// A file's groups and datasets with their headers, for `tessera info`.
#include <fcntl.h>

#include <cstring>

#include <absl/strings/str_cat.h>

#include "array/io/hdf5/state.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::hdf5 {
namespace {

constexpr size_t kMaxObjects = 100000;

struct Visit {
  std::vector<std::pair<std::string, H5O_type_t>> objects;
  bool too_many = false;
};

herr_t visit_one(hid_t, const char* name, const H5O_info_t* info, void* out) {
  auto& v = *static_cast<Visit*>(out);
  if (v.objects.size() >= kMaxObjects) {
    v.too_many = true;
    return 1;
  }
  v.objects.emplace_back(std::strcmp(name, ".") == 0 ? "/" : absl::StrCat("/", name), info->type);
  return 0;
}

}  // namespace

std::vector<Node> walk(const std::string& path) {
  const detail::Handle file = detail::open_file(path);
  auto held = detail::lock();
  Visit v;
  detail::check_status(H5Ovisit2(file.get(), H5_INDEX_NAME, H5_ITER_INC, &visit_one, &v, H5O_INFO_BASIC), path,
                       "cannot list the file's objects");
  if (v.too_many) {
    throw StorageError(path, absl::StrCat("holds more than ", kMaxObjects,
                                          " groups and datasets; tessera lists at most that many"));
  }
  std::vector<Node> nodes;
  for (const auto& [name, type] : v.objects) {
    Node n{name, type == H5O_TYPE_GROUP, {}, std::nullopt, ""};
    const detail::Handle object(H5Oopen(file.get(), name.c_str(), H5P_DEFAULT));
    if (!object.valid()) {
      n.error = detail::last_error();
    } else if (type == H5O_TYPE_DATASET) {
      try {
        n.dataset = detail::read_metadata(object.get(), path, name);
      } catch (const StorageError& e) {
        n.error = e.what();
      }
    } else {
      n.attributes = detail::attributes(object.get());
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace tessera::array::hdf5
