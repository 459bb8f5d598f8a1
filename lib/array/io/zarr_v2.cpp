// zarr v2's `.zarray`: reading, writing, and its chunk pipeline (order C or F,
// the dtype's byte order, the filters, then the compressor).
#include <algorithm>

#include <absl/strings/str_cat.h>

#include "array/io/zarr_json.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::zarr {

using detail::bad;
using detail::field;
using detail::json;

Metadata parse_metadata(const std::string& text, const std::string& path) {
  const json meta = detail::parse_document(text, path);
  if (!meta.is_object()) bad(path, absl::StrCat("expected a JSON object, found ", detail::quote(meta)));
  const json& format = field(meta, "zarr_format", path);
  if (format != 2) bad(path, absl::StrCat("expected zarr_format 2, found ", detail::quote(format)));
  Metadata m;
  const json& dtype = field(meta, "dtype", path);
  if (!dtype.is_string())
    bad(path, absl::StrCat("expected \"dtype\" to be a type string, found ", detail::quote(dtype)));
  try {
    m.dtype = DType::parse(dtype.get<std::string>(), &m.big_endian);
  } catch (const TypeError& e) {
    bad(path, e.what());
  }
  m.shape = detail::int_list(field(meta, "shape", path), "shape", false, path);
  m.chunk_shape = detail::int_list(field(meta, "chunks", path), "chunks", true, path);
  if (m.chunk_shape.size() != m.shape.size()) {
    bad(path, absl::StrCat("expected one chunk size per axis of shape ", shape_str(m.shape), ", found chunks ",
                           shape_str(m.chunk_shape)));
  }
  detail::check_sizes(m.shape, m.chunk_shape, m.dtype, path);
  const json& order = field(meta, "order", path);
  if (order != "C" && order != "F")
    bad(path, absl::StrCat("expected order \"C\" or \"F\", found ", detail::quote(order)));
  m.order = order == "C" ? Order::C : Order::F;
  if (auto sep = meta.find("dimension_separator"); sep != meta.end() && !sep->is_null()) {
    if (*sep != "." && *sep != "/") {
      bad(path, absl::StrCat("expected dimension_separator \".\" or \"/\", found ", detail::quote(*sep)));
    }
    m.dimension_separator = sep->get<std::string>()[0];
  }
  m.fill_value = detail::parse_fill(field(meta, "fill_value", path), m.dtype, path);
  json filters = meta.contains("filters") ? meta["filters"] : json(nullptr);
  if (!filters.is_null() && !filters.is_array()) {
    bad(path, absl::StrCat("expected \"filters\" to be null or a list, found ", detail::quote(filters)));
  }
  m.codecs_json = json{{"compressor", field(meta, "compressor", path)}, {"filters", filters}}.dump();
  detail::v2_codec(m, path);  // unknown or misconfigured codecs are refused at open
  return m;
}

namespace detail {

ChunkCodecPtr v2_codec(const Metadata& m, const std::string& path) {
  const json codecs = json::parse(m.codecs_json);
  const codec::Context context{m.dtype, path};
  PipelineSpec spec;
  spec.dtype = m.dtype;
  spec.chunk_shape = m.chunk_shape;
  for (size_t a = 0; a < m.chunk_shape.size(); ++a) spec.perm.push_back(static_cast<int64_t>(a));
  if (m.order == Order::F) std::reverse(spec.perm.begin(), spec.perm.end());
  spec.big_endian = m.big_endian;
  spec.layout_description.push_back(absl::StrCat("order=", m.order == Order::C ? "C" : "F",
                                                 ", dtype=", m.big_endian ? m.dtype.big_endian_str() : m.dtype.str()));
  if (codecs["filters"].is_array()) {
    for (const json& f : codecs["filters"]) spec.codecs.push_back(codec::from_v2(f, context));
  }
  if (!codecs["compressor"].is_null()) spec.codecs.push_back(codec::from_v2(codecs["compressor"], context));
  return make_pipeline(std::move(spec));
}

std::string format_v2(const Metadata& m) {
  const json codecs = json::parse(m.codecs_json.empty() ? "{\"compressor\": null, \"filters\": null}" : m.codecs_json);
  json meta = {
      {"chunks", m.chunk_shape},
      {"compressor", codecs["compressor"]},
      {"dimension_separator", std::string(1, m.dimension_separator)},
      {"dtype", m.big_endian ? m.dtype.big_endian_str() : m.dtype.str()},
      {"fill_value", fill_json(m.fill_value, m.dtype)},
      {"filters", codecs["filters"]},
      {"order", m.order == Order::C ? "C" : "F"},
      {"shape", m.shape},
      {"zarr_format", 2},
  };
  return meta.dump(4) + "\n";
}

}  // namespace detail
}  // namespace tessera::array::zarr
