#include "tessera/scheduler/keys.hpp"

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera {
namespace {

void flatten_into(const Keys& k, std::vector<Key>& out) {
  if (k.is_key()) {
    out.push_back(k.key());
  } else {
    for (const Keys& item : k.items()) flatten_into(item, out);
  }
}

}  // namespace

Keys::Keys(const std::vector<Key>& keys) : v_(std::vector<Keys>(keys.begin(), keys.end())) {}

std::vector<Key> Keys::flatten() const {
  std::vector<Key> out;
  flatten_into(*this, out);
  return out;
}

const Value& Result::value() const {
  if (const auto* list = std::get_if<std::vector<Result>>(&v_)) {
    throw TypeError(absl::StrCat("expected a single value, found a list of ", list->size(),
                                 " results (index it with [i])"));
  }
  return std::get<Value>(v_);
}

const std::vector<Result>& Result::items() const {
  if (!is_list()) {
    throw TypeError(absl::StrCat("expected a list of results, found a single value of type ",
                                 std::get<Value>(v_).type_name()));
  }
  return std::get<std::vector<Result>>(v_);
}

}  // namespace tessera
