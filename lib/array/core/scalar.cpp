#include "tessera/array/core/scalar.hpp"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "tessera/graph/error.hpp"

namespace tessera::array {
namespace {

std::string real_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.17g", v);
}

}  // namespace

DType Scalar::dtype() const {
  static constexpr DType kinds[] = {DType::bool_(), DType::int64(), DType::uint64(), DType::float64(),
                                    DType::complex128()};
  return kinds[value_.index()];
}

std::string Scalar::str() const {
  return std::visit(
      [](auto v) -> std::string {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, bool>) return v ? "True" : "False";
        else if constexpr (std::is_same_v<V, double>) return real_str(v);
        else if constexpr (std::is_same_v<V, std::complex<double>>)
          return absl::StrCat("(", real_str(v.real()), v.imag() < 0 || std::signbit(v.imag()) ? "" : "+",
                              real_str(v.imag()), "j)");
        else return absl::StrCat(v);
      },
      value_);
}

void Scalar::throw_unrepresentable(DType target) const {
  throw TypeError(absl::StrCat("the value ", str(), " (", dtype().name(), ") cannot be represented as ",
                               target.name()));
}

bool operator==(const Scalar& a, const Scalar& b) {
  if (a.value_.index() != b.value_.index()) return false;
  return std::visit(
      [&](auto x) {
        using V = decltype(x);
        V y = std::get<V>(b.value_);
        if constexpr (std::is_same_v<V, double>) return x == y || (std::isnan(x) && std::isnan(y));
        else if constexpr (std::is_same_v<V, std::complex<double>>)
          return (x.real() == y.real() || (std::isnan(x.real()) && std::isnan(y.real()))) &&
                 (x.imag() == y.imag() || (std::isnan(x.imag()) && std::isnan(y.imag())));
        else return x == y;
      },
      a.value_);
}

}  // namespace tessera::array
