// The process-wide table of SPMD functions by name (tessera/spmd/registry.hpp).
//
// Registrations happen during static initialization, in an order C++ leaves open,
// so the table is a function-local static (made on first use) behind a mutex.
#include "tessera/spmd/registry.hpp"

#include <map>
#include <mutex>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::spmd::detail {
namespace {

struct Entry {
  const void* address;
  std::type_index type;
  RawFnFactory factory;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, Entry, std::less<>> by_name;
  std::map<const void*, const std::string*> by_address;
  std::map<std::type_index, const std::string*> by_type;  // callables without an address
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: engines may look up during exit
  return *r;
}

}  // namespace

bool register_raw(std::string name, const void* address, std::type_index type, RawFnFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto [it, inserted] = r.by_name.try_emplace(name, Entry{address, type, std::move(factory)});
  if (!inserted) {
    // The same function registered twice under one name (a header included by two
    // files) is fine; two functions under one name would run the wrong one remotely.
    if (it->second.address == address && it->second.type == type) return true;
    throw Error(absl::StrCat("spmd::register_function: the name '", name,
                             "' is registered already for another function; give each function its own name"));
  }
  if (address != nullptr) {
    r.by_address.emplace(address, &it->first);
  } else {
    r.by_type.emplace(type, &it->first);
  }
  return true;
}

const std::string* registered_name(const void* address, std::type_index type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (address != nullptr) {
    auto it = r.by_address.find(address);
    return it == r.by_address.end() ? nullptr : it->second;
  }
  auto it = r.by_type.find(type);
  return it == r.by_type.end() ? nullptr : it->second;
}

const RawFnFactory& registered_factory(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(name);
  if (it == r.by_name.end()) {
    throw Error(absl::StrCat("no SPMD function is registered under the name '", name,
                             "' in this process; register it with TESSERA_SPMD_REGISTER at namespace scope "
                             "in code linked into every rank"));
  }
  return it->second.factory;  // entries are never removed, so the reference stays valid
}

}  // namespace tessera::spmd::detail
