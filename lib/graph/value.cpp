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
  int status = 0;
  char* name = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : t.name();
  std::free(name);
  return out;
}

void throw_bad_cast(const std::type_info& expected, const HolderBase* actual) {
  throw TypeError(absl::StrCat("expected a value of type ", type_name(expected), ", found ",
                               type_name(actual ? actual->type() : typeid(void))));
}

}  // namespace detail
}  // namespace tessera
