// tessera/graph/not_spillable.hpp — a value that turns out to have no spilled form.
//
// A Spillable's serialize may find that one value of its type cannot be written
// after all (tessera's Python module: an object that pickle refuses, such as one
// holding a lock). It throws NotSpillable; the run keeps the value in memory and
// never offers it to spill again, as it does a value of a type without a spilled
// form. (A header of its own, beside error.hpp's hierarchy, so that adding it
// rebuilt little; it belongs there when error.hpp next changes.)
//
// @code
//   static void serialize(const Handle& h, tessera::SpillWriter& w) {
//     if (!h.portable()) throw tessera::NotSpillable("an open handle cannot be written");
//     ...
//   }
// @endcode
#pragma once

#include "tessera/graph/error.hpp"

namespace tessera {

//! Thrown by Spillable<T>::serialize for a value that cannot be written: the
//! run keeps it in memory (see the file comment).
class NotSpillable : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera
