// tools/info_command.cpp — `tessera info PATH`: what `zarr info` prints for a
// zarr array (v2 or v3) or a group, and the header of a .npy file.
//
// For an array: format, shape, dtype (and stored byte order), chunks (and
// shards), the codec pipeline, the bytes stored against the bytes the elements
// take uncompressed, and how many chunks exist. For a group: the tree of its
// groups and arrays, each array with its shape and dtype. Counting stored bytes
// lists the array's directory once (no chunk is read).
#include <cstdio>
#include <filesystem>
#include <string>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "cli.hpp"
#include "command.hpp"
#include "human.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::tool {
namespace {

namespace ta = tessera::array;
namespace fs = std::filesystem;

// The bytes and count of the chunk files under an array's directory (metadata excluded).
std::pair<uint64_t, uint64_t> stored(const std::string& dir, int zarr_format) {
  uint64_t bytes = 0, files = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      // A nested array or group is not this array's.
      if (fs::exists(it->path() / ".zarray") || fs::exists(it->path() / ".zgroup") ||
          (zarr_format == 3 && fs::exists(it->path() / "zarr.json"))) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (name.empty() || name[0] == '.' || name == "zarr.json") continue;
    bytes += it->file_size(ec);
    ++files;
  }
  return {bytes, files};
}

void print_array(const std::string& path) {
  const ta::zarr::Store z = ta::zarr::open(path);
  const ta::zarr::Metadata& m = z.metadata();
  uint64_t total = 1;
  for (int64_t s : m.shape) total *= static_cast<uint64_t>(s);
  const uint64_t nbytes = total * m.dtype.itemsize();
  const auto [bytes, files] = stored(path, m.zarr_format);
  std::printf("Type               : zarr v%d array\n", m.zarr_format);
  std::printf("Shape              : %s\n", ta::shape_str(m.shape).c_str());
  std::printf("Data type          : %s%s\n", m.dtype.name().c_str(), m.big_endian ? " (stored big-endian)" : "");
  if (m.inner_chunk_shape.empty()) {
    std::printf("Chunk shape        : %s\n", ta::shape_str(m.chunk_shape).c_str());
  } else {
    std::printf("Shard shape        : %s\n", ta::shape_str(m.chunk_shape).c_str());
    std::printf("Chunk shape        : %s (inside each shard)\n", ta::shape_str(m.inner_chunk_shape).c_str());
  }
  if (!m.dimension_names.empty())
    std::printf("Dimension names    : %s\n", absl::StrJoin(m.dimension_names, ", ").c_str());
  const std::vector<std::string> codecs = z.describe_codecs();
  for (size_t i = 0; i < codecs.size(); ++i) {
    std::printf("%s: %s\n", i == 0 ? "Codecs             " : "                   ", codecs[i].c_str());
  }
  std::printf("No. bytes          : %llu (%s)\n", static_cast<unsigned long long>(nbytes),
              human(static_cast<double>(nbytes)).c_str());
  std::printf("No. bytes stored   : %llu (%s)\n", static_cast<unsigned long long>(bytes),
              human(static_cast<double>(bytes)).c_str());
  if (bytes > 0) std::printf("Storage ratio      : %.1f\n", static_cast<double>(nbytes) / static_cast<double>(bytes));
  std::printf("Chunks initialized : %llu/%lld%s\n", static_cast<unsigned long long>(files),
              static_cast<long long>(z.chunks().total_blocks()), m.inner_chunk_shape.empty() ? "" : " (shards)");
}

void print_group(const std::string& path) {
  for (const ta::zarr::Node& n : ta::zarr::walk(path)) {
    const size_t depth = n.path.empty() ? 0 : static_cast<size_t>(std::count(n.path.begin(), n.path.end(), '/')) + 1;
    const std::string name = n.path.empty() ? path : n.path.substr(n.path.rfind('/') + 1);
    const std::string indent(2 * depth, ' ');
    if (n.is_group) {
      std::printf("%s%s/ (zarr v%d group)\n", indent.c_str(), name.c_str(), n.zarr_format);
    } else {
      const ta::zarr::Store z = ta::zarr::open((fs::path(path) / n.path).string());
      std::printf("%s%s %s %s (zarr v%d)\n", indent.c_str(), name.c_str(), ta::shape_str(z.shape()).c_str(),
                  z.dtype().name().c_str(), n.zarr_format);
    }
  }
}

void print_npy(const std::string& path) {
  const ta::npy::Header h = ta::npy::read_header(path);
  std::printf("Type               : .npy %d.%d\n", h.major, h.minor);
  std::printf("Shape              : %s\n", ta::shape_str(h.shape).c_str());
  std::printf("Data type          : %s%s\n", h.dtype.name().c_str(), h.fortran_order ? " (Fortran order)" : "");
}

int run(const std::string& path) {
  try {
    if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") {
      print_npy(path);
    } else if (ta::zarr::is_group(path)) {
      print_group(path);
    } else {
      print_array(path);
    }
  } catch (const StorageError& e) {
    throw InputError(path, e.what());
  }
  return 0;
}

void define_info(CLI::App& info, Action& action) {
  info.footer(
      "Describes the zarr array or group (v2 or v3) or the .npy file at PATH: format, shape, dtype, chunks and "
      "shards, codecs, stored and uncompressed bytes, chunks initialized; for a group, its tree.");
  auto path = std::make_shared<std::string>();
  set_action(info, action, [path] { return run(*path); });
  info.add_option("PATH", *path, "a zarr array or group, or a .npy file")->required();
}

}  // namespace

const CommandGroup& info_group() {
  static const CommandGroup group{"info", "describe a zarr array or group, or a .npy file", define_info};
  return group;
}

}  // namespace tessera::tool
