// delta (zarr v2 filter, numcodecs.Delta): each element minus the one before,
// computed in `dtype` and stored as `astype`; decoding is the running sum.
// Integers wrap as numpy's do (the arithmetic is done unsigned).
#include <absl/strings/str_cat.h>

#include "array/io/codecs/filter_types.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;
using detail::load;
using detail::put;

template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}

class Delta final : public Codec {
 public:
  Delta(DType dtype, DType astype) : dtype_(dtype), astype_(astype) {}

  std::string name() const override { return "delta"; }
  std::string describe() const override {
    return absl::StrCat("delta(dtype=", dtype_.str(), ", astype=", astype_.str(), ")");
  }

  size_t decode(Bytes in, MutableBytes out) const override {
    const size_t n = detail::element_count(in, astype_, out, dtype_, "delta");
    detail::dispatch2(astype_, dtype_, [&]<class A, class T>() {
      T sum{};
      for (size_t i = 0; i < n; ++i) {
        sum = wrap_add(sum, static_cast<T>(load<A>(in.data() + i * sizeof(A))));
        put<T>(out.data() + i * sizeof(T), sum);
      }
    });
    return n * dtype_.itemsize();
  }

  size_t encode_bound(size_t n) const override { return encoded_size(n); }

  size_t encode(Bytes in, MutableBytes out) const override {
    const size_t n = detail::element_count(in, dtype_, out, astype_, "delta");
    detail::dispatch2(dtype_, astype_, [&]<class T, class A>() {
      T prev{};
      for (size_t i = 0; i < n; ++i) {
        const T v = load<T>(in.data() + i * sizeof(T));
        put<A>(out.data() + i * sizeof(A), static_cast<A>(i == 0 ? v : wrap_sub(v, prev)));
        prev = v;
      }
    });
    return n * astype_.itemsize();
  }

  size_t encoded_size(size_t decoded) const override { return decoded / dtype_.itemsize() * astype_.itemsize(); }
  size_t decoded_size(size_t encoded) const override { return encoded / astype_.itemsize() * dtype_.itemsize(); }

  json v2_json() const override { return {{"id", "delta"}, {"dtype", dtype_.str()}, {"astype", astype_.str()}}; }
  json v3_json() const override { return nullptr; }

 private:
  DType dtype_, astype_;
};

CodecPtr delta_v2(const json& c, const Context& context) {
  const DType dtype = detail::numeric_dtype(c, "dtype", context.dtype, "delta", context);
  return std::make_shared<Delta>(dtype, detail::numeric_dtype(c, "astype", dtype, "delta", context));
}

CodecPtr delta_spec(const std::vector<std::string>& args, const Context& context) {
  if (args.size() > 1) throw CodecSpecError("codec delta: expected delta or delta:ASTYPE");
  return std::make_shared<Delta>(context.dtype, detail::spec_dtype(args, 0, context.dtype, "delta"));
}

}  // namespace

const CodecType kDelta = {"delta", &delta_v2, nullptr, &delta_spec, true};

}  // namespace tessera::array::codec
