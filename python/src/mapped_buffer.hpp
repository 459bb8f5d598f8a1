// python/src/mapped_buffer.hpp — bytes of a mapped scratch file, seen from Python.
//
// A spilled numpy block comes back as a view of the scratch file's pages: the
// unpickled array's buffer is a MappedBuffer (writable, buffer protocol: the
// mapping is copy-on-write) that keeps the mapping alive for as long as the array lives.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>

namespace tessera::python {

struct MappedBuffer {
  std::shared_ptr<const std::byte> data;  // null for an empty buffer
  size_t size;
};

//! Registers MappedBuffer's Python type (tessera._tessera._MappedBuffer).
void bind_mapped_buffer(pybind11::module_& m);

}  // namespace tessera::python
