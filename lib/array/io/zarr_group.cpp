// zarr groups: telling a group from an array, walking a hierarchy (iteratively,
// with limits, since a hostile tree may be deep or wide), creating a group.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <absl/strings/str_cat.h>

#include "array/io/zarr_json.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::zarr {
namespace {

namespace fs = std::filesystem;
using detail::json;

constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxNodes = 1000000;

// 2 or 3 when `dir` is a zarr node of that version, 0 otherwise; `group` says which kind.
int node_kind(const fs::path& dir, bool* group) {
  std::error_code ec;
  if (fs::exists(dir / ".zarray", ec)) return *group = false, 2;
  if (fs::exists(dir / ".zgroup", ec)) return *group = true, 2;
  if (fs::exists(dir / "zarr.json", ec)) {
    const std::string path = (dir / "zarr.json").string();
    const std::string text = detail::read_text(path);
    if (detail::json_depth(text, detail::kMaxDepth) > detail::kMaxDepth) return 0;
    const json meta = json::parse(text, nullptr, false);
    if (!meta.is_object()) return 0;
    *group = detail::string_at(meta, "node_type") == "group";
    return 3;
  }
  return 0;
}

}  // namespace

bool is_group(const std::string& path) {
  bool group = false;
  return node_kind(path, &group) != 0 && group;
}

std::vector<Node> walk(const std::string& path) {
  std::vector<Node> out;
  bool group = false;
  const int format = node_kind(path, &group);
  if (format == 0) throw StorageError(path, "no zarr array or group here");
  // A directory reached twice (a symlink to itself or to a parent: a cycle,
  // or a second name for one node) is listed once, under its first name.
  std::set<std::pair<dev_t, ino_t>> seen;
  auto first_visit = [&](const fs::path& dir) {
    struct stat st {};
    return ::stat(dir.c_str(), &st) == 0 && seen.emplace(st.st_dev, st.st_ino).second;
  };
  first_visit(path);
  // Depth-first with an explicit stack; children pushed in reverse name order.
  std::vector<std::pair<Node, size_t>> stack = {{Node{"", group, format}, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    out.push_back(node);
    if (out.size() > kMaxNodes) throw StorageError(path, absl::StrCat("more than ", kMaxNodes, " zarr nodes"));
    if (!node.is_group) continue;
    if (depth >= kMaxDepth)
      throw StorageError(path, absl::StrCat("zarr groups nested deeper than ", kMaxDepth, " levels"));
    std::vector<Node> children;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(path) / node.path, ec)) {
      if (!entry.is_directory(ec)) continue;
      bool g = false;
      const int f = node_kind(entry.path(), &g);
      if (f == 0) continue;
      const std::string name = entry.path().filename().string();
      children.push_back(Node{node.path.empty() ? name : node.path + "/" + name, g, f});
    }
    std::sort(children.begin(), children.end(), [](const Node& a, const Node& b) { return a.path < b.path; });
    std::erase_if(children, [&](const Node& c) { return !first_visit(fs::path(path) / c.path); });
    for (auto c = children.rbegin(); c != children.rend(); ++c) stack.emplace_back(std::move(*c), depth + 1);
  }
  return out;
}

void create_group(const std::string& path, int zarr_format) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw StorageError(path, "cannot create the directory", ec.value());
  if (zarr_format == 2) {
    detail::write_text((fs::path(path) / ".zgroup").string(), "{\n    \"zarr_format\": 2\n}\n");
  } else {
    detail::write_text((fs::path(path) / "zarr.json").string(),
                       json{{"zarr_format", 3}, {"node_type", "group"}, {"attributes", json::object()}}.dump(2) + "\n");
  }
}

}  // namespace tessera::array::zarr
