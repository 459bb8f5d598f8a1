// fixedscaleoffset (zarr v2 filter, numcodecs.FixedScaleOffset): stores
// round((x - offset) * scale) as `astype` (round half to even, as numpy's
// around); decoding gives x = stored / scale + offset in `dtype`.
#include <cmath>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/io/codecs/filter_types.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;
using detail::load;
using detail::put;

class FixedScaleOffset final : public Codec {
 public:
  FixedScaleOffset(double offset, double scale, DType dtype, DType astype)
      : offset_(offset), scale_(scale), dtype_(dtype), astype_(astype) {}

  std::string name() const override { return "fixedscaleoffset"; }
  std::string describe() const override {
    return absl::StrCat("fixedscaleoffset(offset=", offset_, ", scale=", scale_, ", dtype=", dtype_.str(),
                        ", astype=", astype_.str(), ")");
  }

  size_t decode(Bytes in, MutableBytes out) const override {
    const size_t n = detail::element_count(in, astype_, out, dtype_, "fixedscaleoffset");
    detail::dispatch2(astype_, dtype_, [&]<class A, class T>() {
      for (size_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(load<A>(in.data() + i * sizeof(A))) / scale_ + offset_;
        put<T>(out.data() + i * sizeof(T), static_cast<T>(v));
      }
    });
    return n * dtype_.itemsize();
  }

  size_t encode_bound(size_t n) const override { return encoded_size(n); }

  size_t encode(Bytes in, MutableBytes out) const override {
    const size_t n = detail::element_count(in, dtype_, out, astype_, "fixedscaleoffset");
    detail::dispatch2(dtype_, astype_, [&]<class T, class A>() {
      // numpy computes in T for float arrays (float32 stays float32), in float64 otherwise.
      using W = std::conditional_t<is_floating_v<T>, T, double>;
      for (size_t i = 0; i < n; ++i) {
        const W v =
            (static_cast<W>(load<T>(in.data() + i * sizeof(T))) - static_cast<W>(offset_)) * static_cast<W>(scale_);
        put<A>(out.data() + i * sizeof(A), static_cast<A>(std::nearbyint(v)));
      }
    });
    return n * astype_.itemsize();
  }

  size_t encoded_size(size_t decoded) const override { return decoded / dtype_.itemsize() * astype_.itemsize(); }
  size_t decoded_size(size_t encoded) const override { return encoded / astype_.itemsize() * dtype_.itemsize(); }

  json v2_json() const override {
    return {{"id", "fixedscaleoffset"}, {"offset", offset_}, {"scale", scale_}, {"dtype", dtype_.str()},
            {"astype", astype_.str()}};
  }
  json v3_json() const override { return nullptr; }

 private:
  double offset_, scale_;
  DType dtype_, astype_;
};

double number(const json& c, const char* key, const Context& context) {
  auto it = c.find(key);
  if (it == c.end() || !it->is_number()) {
    bad_config("fixedscaleoffset", absl::StrCat("expected \"", key, "\" to be a number"), context);
  }
  return it->get<double>();
}

CodecPtr fixedscaleoffset_v2(const json& c, const Context& context) {
  const double offset = number(c, "offset", context), scale = number(c, "scale", context);
  if (scale == 0 || !std::isfinite(scale))
    bad_config("fixedscaleoffset", "expected a finite, non-zero \"scale\"", context);
  const DType dtype = detail::numeric_dtype(c, "dtype", context.dtype, "fixedscaleoffset", context);
  return std::make_shared<FixedScaleOffset>(offset, scale, dtype,
                                            detail::numeric_dtype(c, "astype", dtype, "fixedscaleoffset", context));
}

CodecPtr fixedscaleoffset_spec(const std::vector<std::string>& args, const Context& context) {
  constexpr const char* kForm = "codec fixedscaleoffset: expected fixedscaleoffset:OFFSET:SCALE[:ASTYPE]";
  if (args.size() < 2 || args.size() > 3) throw CodecSpecError(kForm);
  double offset = 0, scale = 0;
  if (!absl::SimpleAtod(args[0], &offset) || !absl::SimpleAtod(args[1], &scale) || scale == 0 ||
      !std::isfinite(scale) || !std::isfinite(offset)) {
    throw CodecSpecError(absl::StrCat(kForm, " with finite numbers and a non-zero SCALE, found '",
                                             absl::StrJoin(args, ":"), "'"));
  }
  return std::make_shared<FixedScaleOffset>(offset, scale, context.dtype,
                                            detail::spec_dtype(args, 2, context.dtype, "fixedscaleoffset"));
}

}  // namespace

const CodecType kFixedScaleOffset = {"fixedscaleoffset", &fixedscaleoffset_v2, nullptr, &fixedscaleoffset_spec, true};

}  // namespace tessera::array::codec
