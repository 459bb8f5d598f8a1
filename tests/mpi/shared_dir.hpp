// Test helper for suites under mpirun: a folder every rank sees (this machine's
// file system stands for the shared one).
#pragma once

#include <unistd.h>

#include <absl/strings/str_cat.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "tessera/array/array.hpp"
#include "tessera/comm/communicator.hpp"

namespace tessera::mpi_testing {

//! Rank 0 makes the folder `<tmp>/tessera-mpi-<what>-<pid>` and sends its name;
//! on destruction every rank waits for the others, then rank 0 removes it.
struct SharedDir {
  std::shared_ptr<Communicator> comm;
  std::filesystem::path path;
  SharedDir(std::shared_ptr<Communicator> c, const std::string& what) : comm(std::move(c)) {
    std::string name;
    if (comm->rank() == 0) {
      name = (std::filesystem::temp_directory_path() / absl::StrCat("tessera-mpi-", what, "-", ::getpid())).string();
      std::filesystem::remove_all(name);
      std::filesystem::create_directories(name);
    }
    path = allgather_strings(*comm, name)[0];
  }
  ~SharedDir() {
    barrier(*comm);
    if (comm->rank() == 0) std::filesystem::remove_all(path);
  }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;
};

//! Seeds array::unique_token() alike on every rank (rank 0's seed): a test
//! whose rank 0 alone built arrays before (a one-process reference) has moved
//! rank 0's tokens on, and the arrays the ranks then build for a run across
//! ranks must have the same names on every rank. Collective.
inline void same_tokens(Communicator& comm) {
  array::seed_unique_tokens(static_cast<uint64_t>(comm.allgather(comm.rank() == 0 ? ::getpid() : 0)[0]));
}

}  // namespace tessera::mpi_testing
