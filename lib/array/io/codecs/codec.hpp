// One interface for every zarr codec that turns bytes into bytes: compressors
// (blosc, zstd, zlib, gzip, lz4, bz2, lzma), checksums (crc32c) and zarr v2's
// element filters (delta, fixedscaleoffset, whose input and output may differ
// in element size). zarr v2 and v3 build their chunk pipelines from these, so
// adding a codec is one file here plus its line in the table of codec.cpp.
//
// Buffers belong to the caller: `decode` writes into a span sized to the bytes
// the caller expects (a chunk's size is known from the metadata), `encode`
// into one of `encode_bound` bytes. A codec holds only its configuration and is
// used from many tasks at once (every member is const and thread-safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/array/core/dtype.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::codec {

using Bytes = std::span<const std::byte>;
using MutableBytes = std::span<std::byte>;

//! Bad encoded data: the caller adds the chunk and the path to the message.
struct CodecError : Error {
  using Error::Error;
};

//! What a codec's configuration is checked against.
struct Context {
  DType dtype;        //!< the array's element type (blosc's typesize, the filters' defaults)
  std::string path;   //!< the metadata file, for errors
};

class Codec {
 public:
  virtual ~Codec() = default;
  //! The codec's name as zarr spells it ("blosc", "zstd").
  virtual std::string name() const = 0;
  //! The name and the parameters, for messages and `tessera info`: "blosc(cname=lz4, clevel=5, shuffle=shuffle)".
  virtual std::string describe() const = 0;
  //! Decodes `in` into `out`; returns the bytes written. CodecError when `in` is
  //! not what this codec makes or decodes to more than `out` holds.
  virtual size_t decode(Bytes in, MutableBytes out) const = 0;
  //! The most bytes `encode` writes for `n` input bytes.
  virtual size_t encode_bound(size_t n) const = 0;
  //! Encodes `in` into `out` (at least encode_bound bytes); returns the bytes written.
  virtual size_t encode(Bytes in, MutableBytes out) const = 0;
  //! The encoded size of `decoded` bytes for codecs whose output size is fixed
  //! (filters, checksums); compressors return 0 (unknown until decoded).
  virtual size_t encoded_size(size_t decoded) const { (void)decoded; return 0; }
  //! The decoded size of `encoded` bytes for fixed-size codecs; 0 otherwise.
  virtual size_t decoded_size(size_t encoded) const { (void)encoded; return 0; }
  //! zarr v2's JSON ({"id": ...}); StorageError-free, always defined.
  virtual nlohmann::json v2_json() const = 0;
  //! zarr v3's JSON ({"name": ..., "configuration": {...}}); null when v3 has no such codec.
  virtual nlohmann::json v3_json() const = 0;
};

using CodecPtr = std::shared_ptr<const Codec>;

//! One codec kind: how it is read from v2 and v3 metadata and from a
//! command-line spec ("zstd:3"); a null maker means that form does not exist.
struct CodecType {
  const char* name;
  CodecPtr (*from_v2)(const nlohmann::json& config, const Context& context);
  CodecPtr (*from_v3)(const nlohmann::json& configuration, const Context& context);
  //! `args` are the spec's fields after the name ("zstd:3" -> {"3"}).
  CodecPtr (*from_spec)(const std::vector<std::string>& args, const Context& context);
  //! A zarr v2 filter (delta, fixedscaleoffset): written in `filters`, not as the compressor.
  bool filter = false;
};

//! The codec of a v2 `compressor` or `filters` entry. StorageError naming the
//! codec and the path when it is unknown or misconfigured.
CodecPtr from_v2(const nlohmann::json& config, const Context& context);
//! The bytes-to-bytes codec of a v3 `codecs` entry (StorageError likewise).
CodecPtr from_v3(const nlohmann::json& entry, const Context& context);
//! A codec from a spec such as "blosc:zstd:5:bitshuffle", "zstd:3", "gzip:6";
//! "none" gives null. CodecSpecError with what is accepted otherwise.
CodecPtr from_spec(const std::string& spec, DType dtype);
//! The spec grammar, for usage texts.
std::string spec_help();
//! A zarr v2 filter from a spec: "delta[:ASTYPE]" or "fixedscaleoffset:OFFSET:SCALE[:ASTYPE]"
//! (ASTYPE a numpy type string, e.g. "<i2"; the filters compute in `dtype`).
//! CodecSpecError with what is accepted otherwise.
CodecPtr filter_from_spec(const std::string& spec, DType dtype);

// Helpers for the codec files: a configuration's fields, checked, with the codec
// and the metadata path in the error.
int64_t int_field(const nlohmann::json& config, const char* key, int64_t fallback, int64_t lo, int64_t hi,
                  const char* codec, const Context& context);
std::string string_field(const nlohmann::json& config, const char* key, const std::string& fallback,
                         const char* codec, const Context& context);
[[noreturn]] void bad_config(const char* codec, const std::string& what, const Context& context);
//! A spec's integer argument (CodecSpecError naming the codec otherwise).
int64_t spec_int(const std::vector<std::string>& args, size_t i, int64_t fallback, int64_t lo, int64_t hi,
                 const char* codec);
//! The codec's name as written in `config` ("id" in v2, "name" in v3), or the JSON itself.
std::string codec_name(const nlohmann::json& config);

//! The CRC-32C (Castagnoli) of `in`, as the crc32c codec stores it (ISA-L's, with
//! the processor's crc32 instruction where it has one).
uint32_t crc32c_checksum(Bytes in);

// The codecs, one file each.
extern const CodecType kBlosc, kZstd, kZlib, kGzip, kLz4, kBz2, kLzma, kCrc32c, kDelta, kFixedScaleOffset;

}  // namespace tessera::array::codec
