// What reading and writing zarr metadata needs in both versions: checked
// fields, fill values (numbers, "NaN", "Infinity", v3's hex bit patterns), the
// limits that keep hostile metadata from exhausting memory, and building the
// chunk pipeline from the codecs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "array/io/chunk_codec.hpp"
#include "tessera/array/io/zarr.hpp"

namespace tessera::array::zarr::detail {

using nlohmann::json;

[[noreturn]] void bad(const std::string& path, const std::string& what);
//! How deep metadata JSON may nest, and how big a metadata file may be.
inline constexpr size_t kMaxDepth = 32;
inline constexpr size_t kMaxMetadataBytes = size_t{16} << 20;

//! The deepest nesting of brackets in JSON `text` (outside strings), counted
//! without parsing; stops counting once past `limit`.
size_t json_depth(std::string_view text, size_t limit);
//! A metadata document: JSON nested at most kMaxDepth deep (deeper is refused
//! before the parser builds anything).
json parse_document(const std::string& text, const std::string& path);
//! The string at `key` of `obj`, or "" when `obj` is not an object or the key
//! is absent or holds something else (json::value would throw a type_error).
std::string string_at(const json& obj, const char* key);
const json& field(const json& meta, const char* key, const std::string& path);
Shape int_list(const json& v, const char* key, bool positive, const std::string& path);
//! A short form of `v` for messages.
std::string quote(const json& v);

std::optional<Scalar> parse_fill(const json& v, DType dtype, const std::string& path);
json fill_json(const std::optional<Scalar>& fill, DType dtype);

//! Refuses shapes and chunk grids that overflow or would take absurd memory to
//! describe: the array's bytes must fit in 2^62, chunks in 2^31 and the chunk
//! grid's per-axis counts in 2^24 together. The StorageError names `path` and
//! begins with `what` (HDF5 datasets are checked so too).
void check_sizes(const Shape& shape, const Shape& chunk_shape, DType dtype, const std::string& path,
                 const std::string& what = "bad zarr metadata");

//! The v2 pipeline from `.zarray`'s compressor and filters (in codecs_json).
ChunkCodecPtr v2_codec(const Metadata& m, const std::string& path);
//! The v3 pipeline from zarr.json's codecs (in codecs_json), for chunks of `chunk_shape`;
//! sets `inner_chunk_shape` when sharded (outermost level).
ChunkCodecPtr v3_codec(const json& codecs, DType dtype, const Shape& chunk_shape,
                       const std::optional<Scalar>& fill, const std::string& path, Shape* inner_chunk_shape,
                       int depth = 0);

//! The metadata files' text.
std::string format_v2(const Metadata& m);
std::string format_v3(const Metadata& m);

//! The whole text of a metadata file: a regular file (never a FIFO or a
//! device) of at most kMaxMetadataBytes (StorageError otherwise).
std::string read_text(const std::string& path);
//! Writes `text` to `path` through a temporary file renamed into place.
void write_text(const std::string& path, const std::string& text);

}  // namespace tessera::array::zarr::detail
