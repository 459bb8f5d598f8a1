#include "tessera/graph/task.hpp"

#include <algorithm>

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>

namespace tessera {

namespace detail {

uint32_t nesting_of(const std::vector<Arg>& args, const char* what) {
  uint32_t deepest = 0;
  for (const Arg& a : args) deepest = std::max(deepest, a.depth());
  if (deepest >= kMaxArgNesting) {
    throw Error(absl::StrCat(what, " nests tasks and lists more than ", kMaxArgNesting,
                             " levels deep; tessera refuses deeper arguments (put the inner levels in tasks of "
                             "their own, referred to by key)"));
  }
  return deepest + 1;
}

}  // namespace detail

// Dependencies by key while slots are numbered: a task may read 10^6 keys, so
// past a few a hash map finds them; below that a scan of deps_ is cheaper than
// making the map (most tasks read one to three keys).
struct Task::SlotIndex {
  static constexpr size_t kScanLimit = 16;
  absl::flat_hash_map<Key, uint32_t> slots;  // filled once deps_ outgrows kScanLimit
};

uint32_t Task::slot_of(const Key& k, SlotIndex& index) {
  const auto next = static_cast<uint32_t>(deps_.size());
  if (next < SlotIndex::kScanLimit) {
    for (uint32_t i = 0; i < next; ++i) {
      if (deps_[i] == k) return i;
    }
    deps_.push_back(k);
    return next;
  }
  if (index.slots.empty()) {
    index.slots.reserve(2 * next);
    for (uint32_t i = 0; i < next; ++i) index.slots.emplace(deps_[i], i);
  }
  auto [it, inserted] = index.slots.try_emplace(k, next);
  if (inserted) deps_.push_back(k);
  return it->second;
}

// Recursion as deep as the arguments nest: at most kMaxArgNesting levels.
void Task::assign_slots(std::vector<Arg>& args, SlotIndex& index) {
  for (Arg& a : args) {
    if (auto* r = std::get_if<Arg::RefArg>(&a.v_)) {
      r->slot = slot_of(r->key, index);
    } else if (auto* n = std::get_if<Arg::NestedArg>(&a.v_)) {
      n->slots.clear();
      for (const Key& k : n->task->dependencies()) n->slots.push_back(slot_of(k, index));
    } else if (auto* l = std::get_if<std::shared_ptr<Arg::ListArg>>(&a.v_)) {
      // Lists may be shared between Args; give this task its own copy to number.
      *l = std::make_shared<Arg::ListArg>(**l);
      assign_slots((*l)->items, index);
    }
  }
}

void Task::assign_slots() {
  depth_ = detail::nesting_of(args_, "a task's arguments");
  deps_.clear();
  size_t refs = 0;
  for (const Arg& a : args_) refs += a.is_ref() ? 1 : 0;
  deps_.reserve(refs);  // the common case, keys read directly, in one allocation
  SlotIndex index;
  assign_slots(args_, index);
}

Value Task::evaluate(const Arg& a, FunctionRef<const Value&(size_t)> dep) const {
  return std::visit(
      [&](const auto& v) -> Value {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, Arg::RefArg>) {
          return dep(v.slot);
        } else if constexpr (std::is_same_v<V, Value>) {
          return v;
        } else if constexpr (std::is_same_v<V, Arg::NestedArg>) {
          return v.task->run([&](size_t i) -> const Value& { return dep(v.slots[i]); });
        } else {
          ValueList items;
          items.reserve(v->items.size());
          for (const Arg& x : v->items) items.push_back(evaluate(x, dep));
          return Value(std::move(items));
        }
      },
      a.v_);
}

Value Task::run(FunctionRef<const Value&(size_t)> dep) const {
  absl::InlinedVector<Value, 4> values;
  values.reserve(args_.size());
  for (const Arg& a : args_) values.push_back(evaluate(a, dep));
  return (*fn_)(std::span(values.data(), values.size()));
}

}  // namespace tessera
