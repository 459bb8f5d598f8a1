// The table of codecs and the helpers their files share.
#include "array/io/codecs/codec.hpp"

#include <stdexcept>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include "tessera/graph/error.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

// Adding a codec: its file, and its line here.
const CodecType* const kTypes[] = {&kBlosc, &kZstd, &kZlib, &kGzip, &kLz4, &kBz2, &kLzma,
                                   &kCrc32c, &kDelta, &kFixedScaleOffset};

const CodecType* find_type(const std::string& name) {
  for (const CodecType* t : kTypes) {
    if (name == t->name) return t;
  }
  return nullptr;
}

std::string short_json(const json& v) {
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

}  // namespace

std::string codec_name(const json& config) {
  for (const char* key : {"id", "name"}) {
    if (config.is_object() && config.contains(key) && config[key].is_string()) return config[key].get<std::string>();
  }
  return short_json(config);
}

[[noreturn]] void bad_config(const char* codec, const std::string& what, const Context& context) {
  throw StorageError(context.path, absl::StrCat("codec '", codec, "': ", what));
}

int64_t int_field(const json& config, const char* key, int64_t fallback, int64_t lo, int64_t hi, const char* codec,
                  const Context& context) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi) {
    bad_config(codec, absl::StrCat("expected \"", key, "\" to be an integer from ", lo, " to ", hi, ", found ",
                                   short_json(*it)),
               context);
  }
  return it->get<int64_t>();
}

std::string string_field(const json& config, const char* key, const std::string& fallback, const char* codec,
                         const Context& context) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    bad_config(codec, absl::StrCat("expected \"", key, "\" to be a string, found ", short_json(*it)), context);
  }
  return it->get<std::string>();
}

int64_t spec_int(const std::vector<std::string>& args, size_t i, int64_t fallback, int64_t lo, int64_t hi,
                 const char* codec) {
  if (i >= args.size() || args[i].empty()) return fallback;
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(args[i], &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != args[i].size() || used == 0 || v < lo || v > hi) {
    throw CodecSpecError(
        absl::StrCat("codec ", codec, ": expected an integer from ", lo, " to ", hi, ", found '", args[i], "'"));
  }
  return v;
}

CodecPtr from_v2(const json& config, const Context& context) {
  if (!config.is_object() || !config.contains("id") || !config["id"].is_string()) {
    throw StorageError(context.path,
                       absl::StrCat("expected a codec object with an \"id\", found ", short_json(config)));
  }
  const std::string name = config["id"].get<std::string>();
  const CodecType* t = find_type(name);
  if (t == nullptr || t->from_v2 == nullptr) {
    throw StorageError(context.path, absl::StrCat("unsupported zarr v2 codec '", name,
                                                  "'; supported: blosc, zstd, zlib, gzip, lz4, bz2, lzma, delta, "
                                                  "fixedscaleoffset"));
  }
  return t->from_v2(config, context);
}

CodecPtr from_v3(const json& entry, const Context& context) {
  if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
    throw StorageError(context.path,
                       absl::StrCat("expected a codec object with a \"name\", found ", short_json(entry)));
  }
  const std::string name = entry["name"].get<std::string>();
  const CodecType* t = find_type(name);
  if (t == nullptr || t->from_v3 == nullptr) {
    throw StorageError(context.path, absl::StrCat("unsupported zarr v3 codec '", name,
                                                  "'; supported: bytes, transpose, sharding_indexed, blosc, gzip, "
                                                  "zstd, crc32c"));
  }
  static const json kEmpty = json::object();
  auto c = entry.find("configuration");
  if (c != entry.end() && !c->is_object()) {
    bad_config(t->name, absl::StrCat("expected \"configuration\" to be an object, found ", short_json(*c)), context);
  }
  return t->from_v3(c == entry.end() ? kEmpty : *c, context);
}

CodecPtr from_spec(const std::string& spec, DType dtype) {
  if (spec == "none") return nullptr;
  std::vector<std::string> parts = absl::StrSplit(spec, ':');
  const CodecType* t = find_type(parts[0]);
  if (t == nullptr || t->from_spec == nullptr || t->filter) {
    throw CodecSpecError(absl::StrCat(t != nullptr && t->filter ? "codec '" : "unknown codec '", spec,
                                             t != nullptr && t->filter ? "' is a filter, not a compressor" : "",
                                             "'; expected ", spec_help()));
  }
  parts.erase(parts.begin());
  return t->from_spec(parts, Context{dtype, "--codec"});
}

CodecPtr filter_from_spec(const std::string& spec, DType dtype) {
  std::vector<std::string> parts = absl::StrSplit(spec, ':');
  const CodecType* t = find_type(parts[0]);
  if (t == nullptr || !t->filter || t->from_spec == nullptr) {
    throw CodecSpecError(absl::StrCat("unknown filter '", spec,
                                             "'; expected delta[:ASTYPE] or fixedscaleoffset:OFFSET:SCALE[:ASTYPE]"));
  }
  parts.erase(parts.begin());
  return t->from_spec(parts, Context{dtype, "filters"});
}

std::string spec_help() {
  return "none, blosc[:CNAME[:LEVEL[:SHUFFLE]]] (CNAME blosclz|lz4|lz4hc|zlib|zstd, SHUFFLE "
         "noshuffle|shuffle|bitshuffle), zstd[:LEVEL], zlib[:LEVEL], gzip[:LEVEL], lz4[:ACCELERATION], bz2[:LEVEL] "
         "or lzma[:PRESET]";
}

}  // namespace tessera::array::codec
