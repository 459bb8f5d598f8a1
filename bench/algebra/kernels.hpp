// bench_algebra's kernel rows: each block kernel of the array operations beside
// its Eigen Tensor expression (kernels.cpp says what each row times).
#pragma once

#include <functional>

#include "tessera/array/array.hpp"

//! The shortest of `repeats` runs of `f`, in seconds.
double best_of(int repeats, const std::function<void()>& f);

//! Prints one `kernel NAME tessera=S eigen=S same=0|1` line per kernel for the
//! one-block (n, n) arrays `one_f32` (float32) and `one_f64` (float64).
void print_kernel_rows(const tessera::array::Array& one_f32, const tessera::array::Array& one_f64, int repeats);
