// tessera/graph/wire.hpp — a Value as bytes that another process of the same
// program makes again.
//
// SPMD engines on MPI ranks send arguments, pushed names and results between
// processes. A Value crosses as the name of its type followed by the type's
// Spillable form (tessera/graph/spill.hpp): a type that can spill can travel,
// with no second customization point to write. Besides the Spillable types
// (std::string, vectors, tessera::array::NDArray, a user's own), scalars
// (bool, the integer and floating-point types, std::complex<float|double>),
// ValueList (std::vector<Value>) and std::map<std::string, Value> travel, up
// to 64 levels deep. An empty Value travels as itself.
//
// The type's name is its std::type_info name, the same in every process that
// runs one binary; a process knows every Spillable type that a Value is made
// of anywhere in its program from the start (each registers itself then), so a
// receiver needs no set-up. An array comes back as a read-only view of the
// received bytes: no copy beyond the transfer.
//
// @code
//   std::vector<std::byte> bytes = tessera::to_wire(tessera::Value(std::string("hello")));
//   // ... sent to another process, received into `data` (a shared_ptr) ...
//   tessera::BytesReader in(data, size, "a message from rank 0");
//   tessera::Value v = tessera::from_wire(in);      // v.as<std::string>() == "hello"
// @endcode
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/graph/spill.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

//! Appends `v` to `w`. Throws TypeError when its type (or a Value inside it) has
//! no wire form, naming the type; Error beyond 64 levels of nesting.
void to_wire(const Value& v, SpillWriter& w);
//! `v` as bytes.
std::vector<std::byte> to_wire(const Value& v);
//! The next Value that to_wire wrote. Throws tessera::Error when the bytes are
//! damaged or short, or name a type this program does not know, saying so.
Value from_wire(SpillReader& r);

}  // namespace tessera
