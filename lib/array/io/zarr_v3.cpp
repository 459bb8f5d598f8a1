// zarr v3's `zarr.json` for arrays: reading, writing, and the codec chain
// (array-to-array `transpose`s, one array-to-bytes codec — `bytes` or
// `sharding_indexed` — then bytes-to-bytes codecs).
#include <algorithm>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/io/zarr_json.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::zarr {

using detail::bad;
using detail::field;
using detail::json;

namespace {

constexpr int kMaxNesting = 4;  // sharding inside sharding...

const json& configuration(const json& codec) {
  static const json kEmpty = json::object();
  auto it = codec.find("configuration");
  return it == codec.end() || !it->is_object() ? kEmpty : *it;
}

std::string codec_name(const json& codec, const std::string& path) {
  if (!codec.is_object() || !codec.contains("name") || !codec["name"].is_string()) {
    bad(path, absl::StrCat("expected a codec object with a \"name\", found ", detail::quote(codec)));
  }
  return codec["name"].get<std::string>();
}

// transpose's order: a permutation of the axes ("C" and "F" from early drafts too).
std::vector<int64_t> transpose_order(const json& c, size_t ndim, const std::string& path) {
  const json& order = field(configuration(c), "order", path);
  std::vector<int64_t> perm;
  if (order == "C" || order == "F") {
    for (size_t a = 0; a < ndim; ++a) perm.push_back(static_cast<int64_t>(a));
    if (order == "F") std::reverse(perm.begin(), perm.end());
    return perm;
  }
  perm = detail::int_list(order, "order", false, path);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = perm.size() == ndim;
  for (size_t a = 0; ok && a < ndim; ++a) ok = sorted[a] == static_cast<int64_t>(a);
  if (!ok)
    bad(path, absl::StrCat("transpose: expected a permutation of ", ndim, " axes, found ", detail::quote(order)));
  return perm;
}

bool big_endian(const json& c, DType dtype, const std::string& path) {
  const json& conf = configuration(c);
  auto it = conf.find("endian");
  if (it == conf.end() || it->is_null()) {
    if (dtype.itemsize() > 1) bad(path, "bytes: expected \"endian\" for a multi-byte data type");
    return false;
  }
  if (*it != "little" && *it != "big")
    bad(path, absl::StrCat("bytes: expected endian \"little\" or \"big\", found ", detail::quote(*it)));
  return *it == "big";
}

// The encoded size of an index of `n` bytes: only codecs of fixed size may encode it.
size_t index_size(const json& codecs, size_t n, const std::string& path) {
  for (const json& c : codecs) {
    const std::string name = codec_name(c, path);
    if (name == "crc32c") n += 4;
    else if (name != "bytes" && name != "transpose") {
      bad(path,
          absl::StrCat("sharding_indexed: index_codecs must keep a fixed size (bytes, transpose, crc32c), found '",
                       name, "'"));
    }
  }
  return n;
}

}  // namespace

namespace detail {

ChunkCodecPtr v3_codec(const json& codecs, DType dtype, const Shape& chunk_shape, const std::optional<Scalar>& fill,
                       const std::string& path, Shape* inner_chunk_shape, int depth) {
  if (depth > kMaxNesting) bad(path, absl::StrCat("codecs nested more than ", kMaxNesting, " levels deep"));
  if (!codecs.is_array() || codecs.empty())
    bad(path, absl::StrCat("expected \"codecs\" to be a non-empty list, found ", quote(codecs)));
  const codec::Context context{dtype, path};
  PipelineSpec spec;
  spec.dtype = dtype;
  spec.chunk_shape = chunk_shape;
  for (size_t a = 0; a < chunk_shape.size(); ++a) spec.perm.push_back(static_cast<int64_t>(a));
  size_t i = 0;
  for (; i < codecs.size() && codec_name(codecs[i], path) == "transpose"; ++i) {
    const std::vector<int64_t> order = transpose_order(codecs[i], chunk_shape.size(), path);
    std::vector<int64_t> composed;
    for (int64_t o : order) composed.push_back(spec.perm[static_cast<size_t>(o)]);
    spec.perm = composed;
    spec.layout_description.push_back(absl::StrCat("transpose(order=[", absl::StrJoin(order, ", "), "])"));
  }
  if (i == codecs.size())
    bad(path, "expected an array-to-bytes codec (bytes or sharding_indexed) in \"codecs\", found none");
  const std::string a2b = codec_name(codecs[i], path);
  if (a2b == "sharding_indexed") {
    if (i != 0 || i + 1 != codecs.size()) {
      bad(path, "sharding_indexed: tessera reads it only as the sole codec of an array (no transpose before it, no "
                "bytes-to-bytes codec after it)");
    }
    const json& conf = configuration(codecs[i]);
    ShardingSpec s;
    s.dtype = dtype;
    s.shard_shape = chunk_shape;
    s.inner_shape = int_list(field(conf, "chunk_shape", path), "chunk_shape", true, path);
    if (s.inner_shape.size() != chunk_shape.size()) {
      bad(path, absl::StrCat("sharding_indexed: expected an inner chunk_shape of ", chunk_shape.size(), " axes, found ",
                             shape_str(s.inner_shape)));
    }
    uint64_t count = 1;
    for (size_t a = 0; a < chunk_shape.size(); ++a) {
      if (chunk_shape[a] % s.inner_shape[a] != 0) {
        bad(path, absl::StrCat("sharding_indexed: inner chunk_shape ", shape_str(s.inner_shape),
                               " does not divide the shard shape ", shape_str(chunk_shape)));
      }
      count *= static_cast<uint64_t>(chunk_shape[a] / s.inner_shape[a]);
      if (count > (uint64_t{1} << 24)) bad(path, "sharding_indexed: more than 2^24 inner chunks in one shard");
    }
    s.inner = v3_codec(field(conf, "codecs", path), dtype, s.inner_shape, fill, path, nullptr, depth + 1);
    Shape index_shape;
    for (size_t a = 0; a < chunk_shape.size(); ++a) index_shape.push_back(chunk_shape[a] / s.inner_shape[a]);
    index_shape.push_back(2);
    json index_codecs =
        conf.contains("index_codecs")
            ? conf["index_codecs"]
            : json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}});
    s.index = v3_codec(index_codecs, DType::uint64(), index_shape, std::nullopt, path, nullptr, depth + 1);
    s.index_nbytes = index_size(index_codecs, count * 16, path);
    s.index_description = s.index->describe();
    // Absent means "end"; anything else but the two strings is refused, not taken for "end".
    if (auto at = conf.find("index_location"); at != conf.end() && *at != "end" && *at != "start") {
      bad(path, absl::StrCat("sharding_indexed: expected index_location \"end\" or \"start\", found ", quote(*at)));
    }
    s.index_at_end = string_at(conf, "index_location") != "start";
    s.fill_value = fill;
    if (inner_chunk_shape != nullptr) *inner_chunk_shape = s.inner_shape;
    return make_sharding(std::move(s));
  }
  if (a2b != "bytes") {
    if (a2b == "transpose") bad(path, "transpose must come before the array-to-bytes codec");
    codec::from_v3(codecs[i], context);  // an unknown codec is named as such
    bad(path, absl::StrCat("expected the array-to-bytes codec bytes or sharding_indexed, found '", a2b, "'"));
  }
  spec.big_endian = big_endian(codecs[i], dtype, path) && dtype.itemsize() > 1;
  spec.layout_description.push_back(absl::StrCat("bytes(endian=", spec.big_endian ? "big" : "little", ")"));
  for (++i; i < codecs.size(); ++i) {
    const std::string name = codec_name(codecs[i], path);
    if (name == "bytes" || name == "transpose" || name == "sharding_indexed") {
      bad(path, absl::StrCat("codec '", name, "' after the array-to-bytes codec; expected bytes-to-bytes codecs only"));
    }
    spec.codecs.push_back(codec::from_v3(codecs[i], context));
  }
  return make_pipeline(std::move(spec));
}

std::string format_v3(const Metadata& m) {
  json names = nullptr;
  if (!m.dimension_names.empty()) {
    names = json::array();
    for (const std::string& n : m.dimension_names) names.push_back(n.empty() ? json(nullptr) : json(n));
  }
  json meta = {
      {"zarr_format", 3},
      {"node_type", "array"},
      {"shape", m.shape},
      {"data_type", m.dtype.name()},
      {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunk_shape}}}}},
      {"chunk_key_encoding",
       {{"name", m.v2_chunk_keys ? "v2" : "default"},
        {"configuration", {{"separator", std::string(1, m.dimension_separator)}}}}},
      {"fill_value", fill_json(m.fill_value.value_or(Scalar(0)), m.dtype)},
      {"codecs", json::parse(m.codecs_json)},
      {"attributes", json::object()},
      {"dimension_names", names},
  };
  return meta.dump(2) + "\n";
}

}  // namespace detail

Metadata parse_metadata_v3(const std::string& text, const std::string& path) {
  const json meta = detail::parse_document(text, path);
  if (!meta.is_object()) bad(path, absl::StrCat("expected a JSON object, found ", detail::quote(meta)));
  const json& format = field(meta, "zarr_format", path);
  if (format != 3) bad(path, absl::StrCat("expected zarr_format 3, found ", detail::quote(format)));
  const json& node = field(meta, "node_type", path);
  if (node != "array") bad(path, absl::StrCat("expected node_type \"array\", found ", detail::quote(node)));
  Metadata m;
  m.zarr_format = 3;
  m.dimension_separator = '/';
  const json& dtype = field(meta, "data_type", path);
  if (!dtype.is_string())
    bad(path, absl::StrCat("expected \"data_type\" to be a type name, found ", detail::quote(dtype)));
  try {
    m.dtype = DType::parse(dtype.get<std::string>());
  } catch (const TypeError& e) {
    bad(path, absl::StrCat("data_type: ", e.what()));
  }
  if (m.dtype.name() != dtype.get<std::string>()) {
    bad(path, absl::StrCat("expected a v3 data_type name such as \"float64\", found ", detail::quote(dtype)));
  }
  m.shape = detail::int_list(field(meta, "shape", path), "shape", false, path);
  const json& grid = field(meta, "chunk_grid", path);
  if (!grid.is_object() || detail::string_at(grid, "name") != "regular") {
    bad(path, absl::StrCat("expected a \"regular\" chunk_grid, found ", detail::quote(grid)));
  }
  m.chunk_shape = detail::int_list(field(configuration(grid), "chunk_shape", path), "chunk_shape", true, path);
  if (m.chunk_shape.size() != m.shape.size()) {
    bad(path, absl::StrCat("expected one chunk size per axis of shape ", shape_str(m.shape), ", found chunk_shape ",
                           shape_str(m.chunk_shape)));
  }
  detail::check_sizes(m.shape, m.chunk_shape, m.dtype, path);
  if (auto keys = meta.find("chunk_key_encoding"); keys != meta.end()) {
    const std::string name = detail::string_at(*keys, "name");
    if (name != "default" && name != "v2") {
      bad(path, absl::StrCat("expected chunk_key_encoding \"default\" or \"v2\", found ", detail::quote(*keys)));
    }
    m.v2_chunk_keys = name == "v2";
    m.dimension_separator = m.v2_chunk_keys ? '.' : '/';
    const json& conf = configuration(*keys);
    if (auto sep = conf.find("separator"); sep != conf.end()) {
      if (*sep != "." && *sep != "/")
        bad(path, absl::StrCat("expected separator \".\" or \"/\", found ", detail::quote(*sep)));
      m.dimension_separator = sep->get<std::string>()[0];
    }
  }
  m.fill_value = detail::parse_fill(field(meta, "fill_value", path), m.dtype, path);
  if (!m.fill_value) bad(path, "expected a fill_value, found null");
  if (auto names = meta.find("dimension_names"); names != meta.end() && !names->is_null()) {
    if (!names->is_array() || names->size() != m.shape.size()) {
      bad(path, absl::StrCat("expected \"dimension_names\" to hold one name per axis, found ", detail::quote(*names)));
    }
    for (const json& n : *names) {
      if (!n.is_null() && !n.is_string())
        bad(path, absl::StrCat("expected names or null in \"dimension_names\", found ", detail::quote(n)));
      m.dimension_names.push_back(n.is_string() ? n.get<std::string>() : "");
    }
  }
  if (auto st = meta.find("storage_transformers"); st != meta.end() && !(st->is_array() && st->empty())) {
    bad(path, absl::StrCat("storage transformers are not supported, found ", detail::quote(*st)));
  }
  const json& codecs = field(meta, "codecs", path);
  m.codecs_json = codecs.dump();
  detail::v3_codec(codecs, m.dtype, m.chunk_shape, m.fill_value, path, &m.inner_chunk_shape);
  return m;
}

}  // namespace tessera::array::zarr
