// Private: publish (publish.hpp) of one output that every rank of a
// Communicator writes a part of.
//
// Rank 0 makes the temporary (`make`) under storage::publish and tells the
// other ranks its path; every rank then writes its part into it (`write`, which
// may itself be collective, as a run across ranks is) and syncs what it wrote;
// the ranks agree; only then does rank 0 publish (the atomic rename of
// publish.hpp), and the ranks agree once more so that every rank returns or
// throws together. When `write` fails on any rank, no rank publishes: every
// rank has stopped writing when they agree, and rank 0 alone then removes the
// temporary. A rank whose own step failed rethrows its own exception (a
// TaskError from a run across ranks is the same on every rank); a rank that
// only learns of another's failure throws tessera::Error naming it ("rank 3 of
// 4: ..."), as agree_on_errors does.
//
//   rank 0:  check, make(tmp) --path--> write(tmp), sync --agree--> rename --agree
//   rank r:          <------------path- write(tmp), sync --agree-->        --agree
#pragma once

#include <string>

#include <absl/functional/function_ref.h>

#include "storage/publish.hpp"
#include "tessera/comm/communicator.hpp"

namespace tessera::storage {

//! Publishes `path` written by every rank of `comm` (see the file comment).
//! Collective: every rank calls it with the same path and options.
void publish_across(Communicator& comm, const std::string& path, const PublishOptions& options,
                    absl::FunctionRef<void(const std::string& tmp)> make,
                    absl::FunctionRef<void(const std::string& tmp)> write);

//! Runs `step`, then agrees with the other ranks (agree_on_errors); on failure a
//! rank whose own step threw rethrows its own exception, the others throw
//! agree_on_errors' Error naming the ranks that failed. Collective.
void agree_keeping_own(Communicator& comm, absl::FunctionRef<void()> step);

}  // namespace tessera::storage
