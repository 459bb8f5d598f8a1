// Naming callables (dladdr, demangling) and the errors of typed calls.
#include "tessera/graph/callable.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

namespace tessera {
namespace detail {
namespace {

// `_Z3inci` -> `inc`; names that are not mangled come back as they are.
std::string symbol_name(const char* symbol) {
  int status = 0;
  char* d = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string name = status == 0 && d ? d : symbol;
  std::free(d);
  if (auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
  return name;
}

std::string work_out_name(const void* function_address, const std::type_info& type) {
  // A plain function's own name, when the dynamic symbol table has it
  // (shared libraries, or executables linked with -rdynamic); fn(name, f) is the
  // way to name a function that does not depend on how the program was linked.
  Dl_info info{};
  if (function_address != nullptr && dladdr(function_address, &info) != 0 && info.dli_sname) {
    return symbol_name(info.dli_sname);
  }
  if (function_address != nullptr) return "function";
  std::string name = type_name(type);
  // Lambdas demangle as `{lambda(int)#1}` (g++) or `'lambda'(int)` inside their
  // enclosing scope; clang names one of internal linkage as an unnamed type, `f()::$_4`.
  // Keep it short.
  const size_t last = name.rfind("::");
  const bool unnamed = name.compare(last == std::string::npos ? 0 : last + 2, 2, "$_") == 0;
  if (unnamed || name.find("lambda") != std::string::npos) return "lambda";
  return name;
}

}  // namespace

const std::string* callable_name(const void* function_address, const std::type_info& type) {
  // dladdr and demangling cost microseconds; a graph builds millions of tasks
  // from a handful of functions, so each is worked out once.
  // A std::mutex, not an absl::Mutex: ThreadSanitizer sees the pthread calls, but
  // not the atomics inside Debian's uninstrumented libabsl (spmd names every apply,
  // from any thread).
  static std::mutex mu;
  static auto* names = new absl::flat_hash_map<const void*, const std::string*>;
  const void* id = function_address != nullptr ? function_address : static_cast<const void*>(&type);
  std::lock_guard lock(mu);
  auto [it, inserted] = names->try_emplace(id, nullptr);
  if (inserted) it->second = intern(work_out_name(function_address, type));
  return it->second;
}

void throw_argument_type(size_t position, const TypeError& e) {
  throw ArgumentTypeError(absl::StrCat("argument ", position, ": ", e.what()));
}

void throw_arity(size_t expected, size_t given) {
  throw TypeError(absl::StrCat("task function takes ", expected, " argument(s), but ", given, " were given"));
}

}  // namespace detail
}  // namespace tessera
