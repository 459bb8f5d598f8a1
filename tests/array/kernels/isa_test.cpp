// The kernel sets (lib/array/kernels): how one is chosen, and every set this CPU
// runs computing the same products as a plain loop, in one process (CI also
// reruns the numpy comparisons of the arrayops suite under each TESSERA_ISA).
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "array/kernels/dispatch.hpp"
#include "array/kernels/table.hpp"
#include "tessera/array/ops/isa.hpp"
#include "tessera/graph/error.hpp"

using tessera::Error;
using namespace tessera::array;

namespace {

const std::vector<std::string> kAll = {"sse2", "avx2", "avx512"};

template <class T>
T random_value(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<T>(u(rng));
  } else {
    using R = typename T::value_type;
    return T(static_cast<R>(u(rng)), static_cast<R>(u(rng)));
  }
}

// C (+)= A B by the definition, in long double (complex: of long double).
template <class T>
void reference(int64_t m, int64_t n, int64_t k, const std::vector<T>& a, const std::vector<T>& b, std::vector<T>& c,
               bool accumulate) {
  using W =
      std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, double>, long double, std::complex<long double>>;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      W s = accumulate ? W(c[i * n + j]) : W(0);
      for (int64_t p = 0; p < k; ++p) s += W(a[i * k + p]) * W(b[p * n + j]);
      c[i * n + j] = T(s);
    }
  }
}

// Every runnable set's GEMM for T on shapes that leave remainders past every
// register block (and k = 0), against the definition.
template <class T>
void check_gemm(kernels::Gemm<T> kernels::Table::*member, double tolerance) {
  std::mt19937_64 rng(47);
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {67, 45, 123}, {130, 70, 260}, {8, 8, 0}};
  // Named copies, not structured bindings: CAPTURE's lambda cannot name a binding (clang 15).
  for (const auto& set : kernels::runnable_tables()) {
    const std::string& name = set.first;
    const kernels::Table* table = set.second;
    for (const auto& shape : shapes) {
      const int64_t m = shape[0], n = shape[1], k = shape[2];
      for (bool accumulate : {false, true}) {
        CAPTURE(name);
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(accumulate);
        std::vector<T> a(m * k), b(k * n), c(m * n);
        for (T& x : a) x = random_value<T>(rng);
        for (T& x : b) x = random_value<T>(rng);
        for (T& x : c) x = random_value<T>(rng);
        std::vector<T> want = c;
        reference(m, n, k, a, b, want, accumulate);
        (table->*member)(m, n, k, a.data(), b.data(), c.data(), accumulate);
        double worst = 0;
        for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, double(std::abs(c[i] - want[i])));
        CHECK(worst <= tolerance * std::sqrt(double(k) + 1));
      }
    }
  }
}

}  // namespace

TEST_CASE("choose_isa: the widest set the CPU runs unless TESSERA_ISA names one") {
  CHECK(kernels::choose_isa("", kAll, {"sse2"}) == "sse2");
  CHECK(kernels::choose_isa("", kAll, {"sse2", "avx2"}) == "avx2");
  CHECK(kernels::choose_isa("", kAll, kAll) == "avx512");
  CHECK(kernels::choose_isa("sse2", kAll, kAll) == "sse2");
  CHECK(kernels::choose_isa("avx2", kAll, kAll) == "avx2");
}

TEST_CASE("choose_isa: an unknown TESSERA_ISA or one the CPU cannot run is an error naming the accepted values") {
  CHECK_THROWS_WITH_AS(kernels::choose_isa("bogus", kAll, kAll),
                       "TESSERA_ISA: expected one of sse2, avx2, avx512 (the kernel sets of this build), found 'bogus'",
                       Error);
  CHECK_THROWS_WITH_AS(kernels::choose_isa("AVX2", kAll, kAll), doctest::Contains("expected one of sse2, avx2, avx512"),
                       Error);
  CHECK_THROWS_WITH_AS(kernels::choose_isa(std::string(100, 'x'), kAll, kAll),
                       doctest::Contains("found 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"), Error);
  CHECK_THROWS_WITH_AS(kernels::choose_isa("avx512", kAll, {"sse2", "avx2"}),
                       "TESSERA_ISA: this CPU cannot run the avx512 kernels; it runs sse2, avx2", Error);
  CHECK_THROWS_WITH_AS(kernels::choose_isa("avx2", {"native"}, {"native"}), doctest::Contains("expected one of native"),
                       Error);
}

TEST_CASE("kernel_isa: the running set is one the build holds and the CPU runs, and TESSERA_ISA's when set") {
  const KernelIsa k = kernel_isa();
  CHECK(std::find(k.supported.begin(), k.supported.end(), k.running) != k.supported.end());
  CHECK(kernels::active().isa == k.running);
  if (!k.requested.empty()) {
    CHECK(k.running == k.requested);
  } else {
    CHECK(k.running == k.supported.back());
  }
}

TEST_CASE("every kernel set this CPU runs multiplies matrices as the definition does") {
  check_gemm<float>(&kernels::Table::gemm_f32, 1e-5);
  check_gemm<double>(&kernels::Table::gemm_f64, 1e-13);
}

TEST_CASE("every kernel set this CPU runs sums rows and squared deviations as the definition does") {
  std::mt19937_64 rng(48);
  for (const int64_t n : {0, 1, 15, 16, 17, 100, 1023}) {
    std::vector<float> f(n);
    std::vector<double> d(n);
    for (int64_t i = 0; i < n; ++i) d[i] = f[i] = random_value<float>(rng) + 2.0f;
    long double sum = 0, squares = 0;
    for (double v : d) sum += v;
    const double m = n > 0 ? static_cast<double>(sum / n) : 0.0;
    for (double v : d) squares += (v - m) * (v - m);
    for (const auto& set : kernels::runnable_tables()) {
      const std::string& name = set.first;
      const kernels::Table* table = set.second;
      CAPTURE(name);
      CAPTURE(n);
      CHECK(table->sum_f32(f.data(), n) == doctest::Approx(static_cast<double>(sum)).epsilon(1e-14));
      CHECK(table->sum_f64(d.data(), n) == doctest::Approx(static_cast<double>(sum)).epsilon(1e-14));
      CHECK(table->squared_deviations_f32(f.data(), n, m) ==
            doctest::Approx(static_cast<double>(squares)).epsilon(1e-13));
      CHECK(table->squared_deviations_f64(d.data(), n, m) ==
            doctest::Approx(static_cast<double>(squares)).epsilon(1e-13));
    }
  }
}
