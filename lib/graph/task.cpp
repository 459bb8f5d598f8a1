#include "tessera/graph/task.hpp"

#include <absl/container/inlined_vector.h>

namespace tessera {

uint32_t Task::slot_of(const Key& k) {
  for (uint32_t i = 0; i < deps_.size(); ++i) {
    if (deps_[i] == k) return i;
  }
  deps_.push_back(k);
  return static_cast<uint32_t>(deps_.size() - 1);
}

void Task::assign_slots(std::vector<Arg>& args) {
  for (Arg& a : args) {
    if (auto* r = std::get_if<Arg::RefArg>(&a.v_)) {
      r->slot = slot_of(r->key);
    } else if (auto* n = std::get_if<Arg::NestedArg>(&a.v_)) {
      n->slots.clear();
      for (const Key& k : n->task->dependencies()) n->slots.push_back(slot_of(k));
    } else if (auto* l = std::get_if<std::shared_ptr<Arg::ListArg>>(&a.v_)) {
      // Lists may be shared between Args; give this task its own copy to number.
      *l = std::make_shared<Arg::ListArg>(**l);
      assign_slots((*l)->items);
    }
  }
}

void Task::assign_slots() {
  deps_.clear();
  assign_slots(args_);
}

Value Task::evaluate(const Arg& a, absl::FunctionRef<const Value&(size_t)> dep) const {
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

Value Task::run(absl::FunctionRef<const Value&(size_t)> dep) const {
  absl::InlinedVector<Value, 4> values;
  values.reserve(args_.size());
  for (const Arg& a : args_) values.push_back(evaluate(a, dep));
  return (*fn_)(absl::MakeConstSpan(values.data(), values.size()));
}

}  // namespace tessera
