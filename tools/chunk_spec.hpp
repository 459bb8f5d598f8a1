// tools/chunk_spec.hpp — the `--chunks` value of `tessera rechunk`, parsed.
//
// One entry per axis, comma-separated: a block size (at least 1), -1 (the whole
// axis), `auto` or `keep` (as in SRC). A bad entry is a UsageError naming the
// option and quoting a short prefix of what was found. Its own file so that the
// fuzz harness of tests/fuzz/ can call it.
//
// @code
//   tessera::array::RechunkSpec s = tessera::tool::parse_chunks("256,-1,keep");
// @endcode
#pragma once

#include <string>

#include "tessera/array/rechunk/rechunk.hpp"

namespace tessera::tool {

//! The entries of a `--chunks` value (or of `option`, such as `--shard`, that
//! takes the same form). Throws UsageError (command.hpp) naming `option`; an
//! empty `option` leaves the name out (a CLI11 validator, whose message CLI11 prefixes).
std::vector<array::RechunkAxis> parse_chunks(const std::string& text, const std::string& option = "--chunks");

//! UsageError naming `option` unless it has one entry per axis of SRC.
void check_chunks_fit(const std::vector<array::RechunkAxis>& axes, size_t ndim,
                      const std::string& option = "--chunks");

}  // namespace tessera::tool
