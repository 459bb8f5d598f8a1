// Private: libhdf5 behind one lock. Debian's libhdf5 is the serial build, not
// thread-safe: every call into it, from any thread, holds `lock()`. The lock
// covers the cheap part only (metadata, raw chunk bytes in and out); filters
// run in tessera's own tasks outside it (filters.hpp).
//
// `Handle` closes an identifier under the lock; `check` turns a failed call
// into a StorageError naming the file and what libhdf5's error stack said.
#pragma once

#include <hdf5.h>

#include <mutex>
#include <string>

namespace tessera::array::hdf5::detail {

//! The process-wide lock every libhdf5 call holds (recursive: helpers nest).
std::unique_lock<std::recursive_mutex> lock();

//! An identifier (file, dataset, group, type, space, property list, attribute)
//! closed by H5Idec_ref under the lock when the last copy goes.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle();
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  //! Gives the identifier up without closing it (closed by its own call: H5Fclose).
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

//! What libhdf5's error stack says of the last failure (its innermost message),
//! then cleared; "" when it says nothing.
std::string last_error();

//! `id` when it is valid; StorageError naming `path`, `what` failed and why otherwise.
hid_t check(hid_t id, const std::string& path, const std::string& what);
//! The same for a status (herr_t, htri_t): negative is a failure.
int check_status(int status, const std::string& path, const std::string& what);

}  // namespace tessera::array::hdf5::detail
