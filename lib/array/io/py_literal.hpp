// Private: the subset of Python literals that .npy headers are written in.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/graph/error.hpp"

namespace tessera::array::detail {

//! A parsed literal: a string, an integer, True/False, None, a tuple, a list or a dict
//! with string keys.
struct PyLiteral {
  enum class Kind { Str, Int, Bool, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  struct Entry;                                            // a dict's key and value
  std::vector<PyLiteral> items;                            // Tuple, List
  std::vector<Entry> entries;                              // Dict

  //! The dict entry named `key`, or nullptr.
  const PyLiteral* find(std::string_view key) const;
  //! "a string", "a tuple", ... for messages.
  std::string kind_name() const;
};

// Defined apart: a pair<string, PyLiteral> inside PyLiteral would need the type complete
// (libstdc++ accepts it under g++, not under clang).
struct PyLiteral::Entry {
  std::string key;
  PyLiteral value;
};

//! What is wrong with a literal, and where.
class LiteralError : public Error {
 public:
  using Error::Error;
};

//! Parses one literal filling all of `text` (surrounding whitespace allowed).
//! Nesting is limited to a few levels, so garbage cannot exhaust the stack.
PyLiteral parse_py_literal(std::string_view text);

}  // namespace tessera::array::detail
