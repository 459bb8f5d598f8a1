// tools/info_command.cpp — `tessera info PATH`: what `zarr info` prints for a
// zarr array (v2 or v3) or a group, and the header of a .npy file.
//
// For an array: format, shape, dtype (and stored byte order), chunks (and
// shards), the codec pipeline, the bytes stored against the bytes the elements
// take uncompressed, and how many chunks exist. For a group: the tree of its
// groups and arrays, each array with its shape and dtype. Counting stored bytes
// lists the array's directory once (no chunk is read). For an HDF5 or NetCDF-4
// file: its groups and datasets, each dataset's shape, dtype, layout, filters
// (and whether tessera decodes them in parallel or libhdf5 under its lock),
// fill value, dimension names and attributes (scale_factor, add_offset...).
#include <cstdio>
#include <filesystem>
#include <string>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "cli.hpp"
#include "command.hpp"
#include "human.hpp"
#include "terminal.hpp"
#include "tessera/array/io/hdf5.hpp"
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
    std::printf("Dimension names    : %s\n", printable(absl::StrJoin(m.dimension_names, ", ")).c_str());
  const std::vector<std::string> codecs = z.describe_codecs();
  for (size_t i = 0; i < codecs.size(); ++i) {
    std::printf("%s: %s\n", i == 0 ? "Codecs             " : "                   ", printable(codecs[i]).c_str());
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
    const std::string name = printable(n.path.empty() ? path : n.path.substr(n.path.rfind('/') + 1));
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

std::string filters_line(const std::vector<ta::hdf5::Filter>& filters) {
  std::vector<std::string> names, slow;
  for (const ta::hdf5::Filter& f : filters) {
    // deflate(4), shuffle(4): the first parameters say enough (scaleoffset has 16).
    const std::vector<unsigned> shown(f.values.begin(), f.values.begin() + std::min<size_t>(f.values.size(), 4));
    names.push_back(shown.empty() ? printable(f.name)
                                  : absl::StrCat(printable(f.name), "(", absl::StrJoin(shown, ", "),
                                                 f.values.size() > shown.size() ? ", ..." : "", ")"));
    if (!f.decoded_by_tessera) slow.push_back(printable(f.name));
  }
  if (names.empty()) return "none";
  if (slow.empty()) return absl::StrCat(absl::StrJoin(names, ", "), " (decoded by tessera, in parallel)");
  return absl::StrCat(absl::StrJoin(names, ", "), " (tessera does not decode ", absl::StrJoin(slow, ", "),
                      ": read through libhdf5's H5Dread, one chunk at a time)");
}

void print_attributes(const std::vector<ta::hdf5::Attribute>& attributes, const std::string& indent) {
  for (size_t i = 0; i < attributes.size(); ++i) {
    std::printf("%s%s: %s = %s\n", indent.c_str(), i == 0 ? "Attributes         " : "                   ",
                printable(attributes[i].name).c_str(), printable(attributes[i].value).c_str());
  }
}

void print_dataset(const ta::hdf5::Metadata& m, const std::string& indent) {
  const char* in = indent.c_str();
  if (m.dimension_without_values) {
    std::printf("%sNetCDF-4 dimension of length %lld (no values)\n", in,
                static_cast<long long>(m.shape.empty() ? 0 : m.shape[0]));
    return;
  }
  std::printf("%sShape              : %s\n", in, ta::shape_str(m.shape).c_str());
  std::printf("%sData type          : %s%s\n", in, m.dtype.name().c_str(), m.big_endian ? " (stored big-endian)" : "");
  std::printf("%sLayout             : %s%s\n", in, m.layout.c_str(),
              m.chunk_shape.empty() ? "" : absl::StrCat(", chunks ", ta::shape_str(m.chunk_shape)).c_str());
  if (!m.chunk_shape.empty()) std::printf("%sFilters            : %s\n", in, filters_line(m.filters).c_str());
  if (m.fill_value) std::printf("%sFill value         : %s\n", in, m.fill_value->str().c_str());
  if (!m.dimension_names.empty()) {
    std::printf("%sDimension names    : %s\n", in, printable(absl::StrJoin(m.dimension_names, ", ")).c_str());
  }
  print_attributes(m.attributes, indent);
}

// Every group and dataset of the file, indented by depth.
void print_hdf5(const std::string& path) {
  std::printf("Type               : HDF5 file\n");
  for (const ta::hdf5::Node& n : ta::hdf5::walk(path)) {
    const size_t depth = n.path == "/" ? 0 : static_cast<size_t>(std::count(n.path.begin(), n.path.end(), '/'));
    const std::string indent(2 * depth, ' ');
    std::printf("%s%s%s\n", indent.c_str(), printable(n.path).c_str(), n.is_group ? " (group)" : "");
    const std::string inner = indent + "  ";
    if (n.dataset) {
      print_dataset(*n.dataset, inner);
    } else if (!n.error.empty()) {
      std::printf("%s(not readable by tessera: %s)\n", inner.c_str(), printable(n.error).c_str());
    } else {
      print_attributes(n.attributes, inner);
    }
  }
}

int run(const std::string& path) {
  try {
    if (const auto dataset = ta::hdf5::split_target(path)) {
      print_dataset(ta::hdf5::open(dataset->first, dataset->second).metadata(), "");
    } else if (ta::hdf5::is_hdf5(path)) {
      print_hdf5(path);
    } else if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") {
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
      "Describes the zarr array or group (v2 or v3), the .npy file or the HDF5 or NetCDF-4 file at PATH: format, "
      "shape, dtype, chunks and shards, codecs, stored and uncompressed bytes, chunks initialized; for a group, its "
      "tree; for an HDF5 file, every group and dataset with its filters, fill value, dimension names and attributes. "
      "With --cpu: the kernel set (sse2, avx2, avx512) tessera runs on this CPU, which TESSERA_ISA forces.");
  auto path = std::make_shared<std::string>();
  auto cpu = std::make_shared<bool>(false);
  set_action(info, action, [path, cpu] { return *cpu ? print_cpu() : run(*path); });
  auto* path_option = info.add_option("PATH", *path, "a zarr array or group, a .npy file, or an HDF5 or NetCDF-4 file");
  auto* cpu_option = info.add_flag("--cpu", *cpu, "the instruction set the array kernels run, and what the CPU has");
  path_option->excludes(cpu_option);
  info.require_option(1);
}

}  // namespace

const CommandGroup& info_group() {
  static const CommandGroup group{"info", "describe a zarr array or group, a .npy file, or an HDF5 file", define_info};
  return group;
}

}  // namespace tessera::tool
