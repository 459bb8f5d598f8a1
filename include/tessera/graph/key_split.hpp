// tessera/graph/key_split.hpp — the group a key belongs to, as dask names it.
//
// dask labels tasks by `key_split(key)`: the key's name without the token that
// makes it unique, so the 10,000 blocks of `('random_sample-d86e5c...', i, j)` are
// all `random_sample`. The pictures (`tessera graph dot`, `visualize`) and the
// report (diagnostics/report.hpp) colour and group tasks by it. The rules are
// dask.utils.key_split's:
//   - the name is cut at '-' into words; the first word is kept (a first word
//     that does not start with a letter keeps its part before ',' with
//     `_'()"` stripped);
//   - the following words are kept while they are all letters and not an
//     8-letter word starting with a..f (a short hex token such as `deadbeef`);
//   - a result of 32 hex digits is `data`; one starting with '<' (a repr such as
//     `<function f at 0x...>`) is its last dotted word.
//
// @code
//   assert(tessera::key_split(tessera::Key("rechunk-merge-9c1f...", {0, 1})) == "rechunk-merge");
//   assert(tessera::key_split("x-1") == "x");
//   assert(tessera::key_split("a9f3c0e0d1b2c3d4e5f60718293a4b5c") == "data");
//   assert(tessera::key_label(tessera::Key("random_sample-d86e5c0d", {0, 1})) == "random_sample (0, 1)");
// @endcode
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>

#include "tessera/graph/key.hpp"

namespace tessera {

//! The group of a key name (see the file comment); `Other` for an empty name.
std::string key_split(std::string_view name);
inline std::string key_split(const char* name) { return key_split(std::string_view(name)); }
inline std::string key_split(const std::string& name) { return key_split(std::string_view(name)); }
//! The group of `key`: key_split of its name (the indices are not part of it).
inline std::string key_split(const Key& key) { return key_split(key.name()); }
//! A short label for pictures: key_split of the name plus the indices, as
//! dask's visualize labels keys without their tokens: `random_sample (0, 1)`.
std::string key_label(const Key& key);

}  // namespace tessera
