#include "tessera/graph/value.hpp"

#include <cxxabi.h>

#include <cstdlib>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera {

size_t nbytes(const ValueList& list) {
  size_t total = sizeof(list);
  for (const Value& v : list) total += v.nbytes();
  return total;
}

namespace detail {

std::string type_name(const std::type_info& t) {
  if (t == typeid(void)) return "nothing (an empty Value)";
  if (t == typeid(std::string)) return "std::string";
  return demangle(t.name());
}

std::string demangle(const char* name) {
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && readable ? readable : name;
  std::free(readable);
  return out;
}

void throw_bad_cast(const std::type_info& expected, const HolderBase* actual) {
  throw TypeError(absl::StrCat("expected a value of type ", type_name(expected), ", found ",
                               type_name(actual ? actual->type() : typeid(void))));
}

}  // namespace detail
}  // namespace tessera
