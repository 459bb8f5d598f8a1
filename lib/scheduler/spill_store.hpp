// The scratch folder of one run with a memory limit: one file per spilled
// result, written through the value's Spillable form and mapped read-only when
// it comes back, so a block's bytes return as the file's pages without a copy.
//
// One file per result because a result's space is then freed by one unlink
// when its last reader has run, and a result that comes back keeps its file:
// spilling it again costs nothing. The folder is made on the first spill,
// inside the folder the caller chose, and everything in it was made here, so
// the destructor removes exactly those files and the folder (a run that fails
// or is cancelled destroys its store like one that succeeds).
//
// A run killed before its destructor ran (kill -9, the OOM killer) leaves its
// folder behind. The folder's name, `tessera-spill-<owner>-XXXXXX`, carries its
// owner as the names of write temporaries do (storage/owner.hpp), so the first
// spill of a later run into the same parent removes the folders whose owner is
// gone: their `<n>.spill` files, then the folder, left in place when it holds
// anything else.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/graph/value.hpp"

namespace tessera::detail {

class SpillStore {
 public:
  //! Files go in a new folder inside `parent` (empty: $TMPDIR, else /tmp);
  //! together they may take `disk_limit` bytes.
  SpillStore(std::string parent, uint64_t disk_limit);
  ~SpillStore();
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  //! Writes `v` (which has a Spillable form) to a new file and returns its id,
  //! or -1 when the disk budget has no room for it. `written` receives the
  //! file's size. Throws StorageError when the disk refuses. Thread-safe.
  int64_t put(const Value& v, uint64_t& written);
  //! Makes the value of file `id` again. Thread-safe.
  Value get(int64_t id, detail::Reload reload) const;
  //! Removes file `id` and returns its space to the budget. Thread-safe.
  void drop(int64_t id);
  //! The folder ("" before the first spill).
  std::string folder() const;

 private:
  std::string path(int64_t id) const;
  void make_folder();  // with mu_ held

  mutable std::mutex mu_;
  std::string parent_, folder_;
  uint64_t disk_limit_, used_ = 0;
  std::vector<uint64_t> sizes_;  // by file id; what each live file reserved
  std::vector<uint8_t> live_;
};

}  // namespace tessera::detail
