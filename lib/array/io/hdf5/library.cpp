// libhdf5's lock, handles and error messages (library.hpp).
#include "array/io/hdf5/library.hpp"

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::array::hdf5::detail {
namespace {

std::recursive_mutex& mutex() {
  static std::recursive_mutex m;
  return m;
}

// The deepest entry of the stack names the cause ("file signature not found",
// "addr overflow"); the outer ones only say which call failed.
herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(out) = e->desc;
  return 0;
}

}  // namespace

std::unique_lock<std::recursive_mutex> lock() {
  std::unique_lock<std::recursive_mutex> held(mutex());
  // libhdf5 prints its error stack to stderr by default: tessera's messages
  // carry what it says instead. Set once, under the lock, before any call.
  static const bool quiet = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)quiet;
  return held;
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    Handle old(id_);
    id_ = o.id_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

Handle::~Handle() {
  if (id_ < 0) return;
  auto held = lock();
  H5Idec_ref(id_);
}

std::string last_error() {
  auto held = lock();
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, &innermost, &message);
  H5Eclear2(H5E_DEFAULT);
  return message;
}

hid_t check(hid_t id, const std::string& path, const std::string& what) {
  if (id >= 0) return id;
  const std::string why = last_error();
  throw StorageError(path, why.empty() ? what : absl::StrCat(what, ": libhdf5 says \"", why, "\""));
}

int check_status(int status, const std::string& path, const std::string& what) {
  if (status >= 0) return status;
  return static_cast<int>(check(H5I_INVALID_HID, path, what));
}

}  // namespace tessera::array::hdf5::detail
