// Whether the Python peer is there: the tests that compare tessera with numpy, dask
// or python3-zarr run $TESSERA_PYTHON. `meson test` sets it to /usr/bin/python3 when
// that Python imports numpy, dask and zarr (tests/meson.build); without it those
// tests are skipped, not failed:
//   TEST_CASE("sums equal numpy's" * python_peer::needed()) { ... }
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>

namespace python_peer {

//! True when $TESSERA_PYTHON names a Python to compare with.
inline bool available() {
  const char* python = std::getenv("TESSERA_PYTHON");
  return python != nullptr && *python != '\0';
}

//! A TEST_CASE decorator: skip this test when there is no Python peer.
inline doctest::skip needed() { return doctest::skip(!available()); }

}  // namespace python_peer
