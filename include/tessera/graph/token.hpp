// tessera/graph/token.hpp — names for keys that say what made them, as dask's tokenize.
//
// A key's name is the thing a graph is indexed by, so the name of a piece of
// work should follow from the work: `token("sum", x_name, "axis=0")` hashes its
// parts to 16 hex digits, and the same parts always give the same token. An
// array operation names its layer this way (so the same expression built twice
// shares its tasks), `delayed` names a call by its function and arguments, and
// storage names the owner of a scratch folder. What cannot be hashed (a
// callable, data in memory) gets `unique_token()` instead: a token never given
// before in this process.
//
// @code
//   std::string a = tessera::token({"sum", "x-3f2a", "axis=0"});   // 16 hex digits
//   assert(a == tessera::token({"sum", "x-3f2a", "axis=0"}));
//   std::string b = tessera::unique_token();                         // differs every call
// @endcode
//
// Thread-safe: token() is a pure function; unique_token() takes a counter
// atomically; seed_unique_tokens() is for start-up, from one thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tessera {

//! A deterministic token for an operation and its parameters, as dask's
//! `tokenize`: `token({"sum", x.name(), "axis=0"})` gives 16 hex digits; the same
//! parts always give the same token, and parts are kept apart (("ab", "c") and
//! ("a", "bc") differ).
//! @code
//!   std::string name = absl::StrCat("sum-", tessera::token({"sum", x_name}));
//! @endcode
std::string token(std::initializer_list<std::string_view> parts);

//! A token never given before in this process, for inputs that cannot be hashed
//! (callables, in-memory data).
//! @code
//!   std::string name = absl::StrCat("from_array-", tessera::unique_token());
//! @endcode
std::string unique_token();

//! Restarts unique_token() from `seed`: processes that seed alike and then build
//! the same arrays in the same order give them the same names, as a run across
//! ranks needs (every rank builds the graph; the names say which task is which).
//! tessera::mpi::Environment seeds every rank with rank 0's random seed. Call it
//! before building arrays, from one thread.
//! @code
//!   tessera::seed_unique_tokens(42);   // on every rank
//! @endcode
void seed_unique_tokens(uint64_t seed);

}  // namespace tessera
