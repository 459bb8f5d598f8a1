// publish_across: one output written by every rank, published once (see the header).
#include "storage/publish_across.hpp"

#include <exception>
#include <string>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::storage {
namespace {

// What rank 0 tells the others once it has (or has not) made the temporary.
constexpr char kPath[] = "path:", kError[] = "error:";

}  // namespace

void agree_keeping_own(Communicator& comm, absl::FunctionRef<void()> step) {
  std::exception_ptr own;
  try {
    step();
  } catch (...) {
    own = std::current_exception();
  }
  try {
    agree_on_errors(comm, [&] {
      if (own) std::rethrow_exception(own);
    });
  } catch (...) {
    if (own) std::rethrow_exception(own);
    throw;
  }
}

void publish_across(Communicator& comm, const std::string& path, const PublishOptions& options,
                    absl::FunctionRef<void(const std::string& tmp)> make,
                    absl::FunctionRef<void(const std::string& tmp)> write) {
  if (comm.rank() != 0) {
    const std::string said = allgather_strings(comm, "")[0];
    if (absl::StartsWith(said, kError)) {
      throw Error(absl::StrCat("rank 0 of ", comm.size(), ": ", said.substr(sizeof kError - 1)));
    }
    const std::string tmp = said.substr(sizeof kPath - 1);
    agree_keeping_own(comm, [&] {
      write(tmp);
      sync_output(tmp);  // rank 0 syncs before its rename; another host's writes are synced by their own rank
    });
    agree_on_errors(comm, [] {});  // rank 0's publishing
    return;
  }
  bool started = false, written = false;
  std::exception_ptr failure;
  try {
    publish(path, options, [&](const std::string& tmp) {
      started = true;
      std::exception_ptr unmade;
      try {
        make(tmp);
      } catch (...) {
        unmade = std::current_exception();
      }
      (void)allgather_strings(comm, unmade ? absl::StrCat(kError, describe(unmade)) : absl::StrCat(kPath, tmp));
      if (unmade) std::rethrow_exception(unmade);
      // Every rank has stopped writing once this returns or throws: publish
      // removes the temporary on failure, renames it otherwise.
      agree_keeping_own(comm, [&] { write(tmp); });
      written = true;
    });
  } catch (...) {
    failure = std::current_exception();
  }
  if (!started) {  // refused before the temporary was made: the others wait for its path
    (void)allgather_strings(comm, absl::StrCat(kError, describe(failure)));
    std::rethrow_exception(failure);
  }
  if (!written) std::rethrow_exception(failure);  // the others know already
  agree_keeping_own(comm, [&] {
    if (failure) std::rethrow_exception(failure);
  });
}

}  // namespace tessera::storage
