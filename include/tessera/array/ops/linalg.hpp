// tessera/array/ops/linalg.hpp — tensordot, dot and matmul of lazy Arrays.
//
// As dask.array's blockwise contraction: the contracted axes of both operands
// are first cut alike (their chunks unified to the common refinement), then
// each output block is the sum, over the blocks along the contracted axes, of
// the products of one block of each operand. Each product is an Eigen matrix
// product (GEMM) of the blocks with their contracted axes moved together; one
// task sums up to `split_every` products in place (GEMM's accumulate, no
// partial block of its own per product), and those sums are added by a tree of
// at most `split_every` at a time, so no task holds more than a few blocks'
// worth of pairs. The result dtype is numpy's
// promotion of the two (bool: a logical or of ands, as numpy's).
//
// @code
//   namespace ta = tessera::array;
//   ta::Array a = ta::random({8192, 8192}, {1024, 1024}), b = ta::random({8192, 8192}, {1024, 1024});
//   ta::Array c = ta::matmul(a, b);                           // (8192, 8192)
//   ta::Array t = ta::tensordot(x, y, {{1, 2}, {0, 1}});      // contract x's 1, 2 with y's 0, 1
//   ta::Array v = ta::dot(m, w);                              // numpy's dot: last axis with second to last
// @endcode
//
// Thread-safe: these functions only build graphs.
#pragma once

#include <utility>
#include <vector>

#include "tessera/array/array.hpp"

namespace tessera::array {

//! Axes to contract: `first[i]` of the left operand with `second[i]` of the right.
using ContractAxes = std::pair<std::vector<int>, std::vector<int>>;

//! numpy's tensordot: the output's axes are the left operand's free axes, then
//! the right's. Error for an axis out of range or given twice, different
//! numbers of axes, or contracted extents that differ. Products are summed
//! `split_every` at a time (in place in one task, then by a tree).
Array tensordot(const Array& a, const Array& b, const ContractAxes& axes, int split_every = 8);
//! numpy's dot: for 1-D and 2-D operands the matrix (or inner) product; for
//! more axes the last axis of `a` with the second to last of `b` (the last for a
//! 1-D `b`).
Array dot(const Array& a, const Array& b);
//! numpy's matmul for 1-D and 2-D operands (Error for more axes: batched
//! products are not supported) and for 0-d ones (Error, as numpy's).
Array matmul(const Array& a, const Array& b);

}  // namespace tessera::array
