// The wire form: a u32 length and the type_info name of the Value's type (length
// 0: an empty Value), then the type's own form — its Spillable form, or for the
// built-in types below their bytes, a count and the Values or entries they hold.
#include "tessera/graph/wire.hpp"

#include <complex>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/string_view.h>
#include <absl/synchronization/mutex.h>

#include "tessera/graph/error.hpp"

namespace tessera {
namespace {

// Values inside Values: a bound, so that neither side recurses as deep as a
// (damaged or hostile) message says.
constexpr int kMaxDepth = 64;
// No type_info name is longer; a longer one is damage.
constexpr uint32_t kMaxNameLength = 4096;

using Write = void (*)(const Value&, SpillWriter&);

struct WireType {
  Write write = nullptr;
  detail::Reload read = nullptr;
};

template <class T>
void write_scalar(const Value& v, SpillWriter& w) {
  w.put(v.as<T>());
}
template <class T>
Value read_scalar(SpillReader& r) {
  return Value(r.get<T>());
}
// A bool's byte must be 0 or 1 before it becomes a bool.
template <>
Value read_scalar<bool>(SpillReader& r) {
  const auto b = r.get<uint8_t>();
  if (b > 1) throw Error(absl::StrCat("a serialized bool is damaged: expected 0 or 1, found ", b));
  return Value(b == 1);
}
template <>
void write_scalar<bool>(const Value& v, SpillWriter& w) {
  w.put<uint8_t>(v.as<bool>() ? 1 : 0);
}

void write_list(const Value& v, SpillWriter& w) {
  const auto& list = v.as<ValueList>();
  w.put<uint64_t>(list.size());
  for (const Value& x : list) to_wire(x, w);
}
Value read_list(SpillReader& r) {
  const auto n = r.get<uint64_t>();
  r.expect(n, sizeof(uint32_t));  // each Value starts with its name's length
  ValueList list;
  list.reserve(n);
  for (uint64_t i = 0; i < n; ++i) list.push_back(from_wire(r));
  return Value(std::move(list));
}

using Namespace = std::map<std::string, Value>;
void write_namespace(const Value& v, SpillWriter& w) {
  const auto& ns = v.as<Namespace>();
  w.put<uint64_t>(ns.size());
  for (const auto& [name, x] : ns) {
    Spillable<std::string>::serialize(name, w);
    to_wire(x, w);
  }
}
Value read_namespace(SpillReader& r) {
  const auto n = r.get<uint64_t>();
  r.expect(n, sizeof(uint64_t) + sizeof(uint32_t));  // a name's length and a Value's
  Namespace ns;
  for (uint64_t i = 0; i < n; ++i) {
    std::string name = Spillable<std::string>::deserialize(r);
    ns.insert_or_assign(std::move(name), from_wire(r));
  }
  return Value(std::move(ns));
}

void write_spillable(const Value& v, SpillWriter& w) { v.spill(w); }

class Registry {
 public:
  Registry() {
    add_scalars<bool, char, signed char, unsigned char, short, unsigned short, int, unsigned, long, unsigned long,
                long long, unsigned long long, float, double, std::complex<float>, std::complex<double>>();
    add(typeid(ValueList), {&write_list, &read_list});
    add(typeid(Namespace), {&write_namespace, &read_namespace});
  }
  void add(const std::type_info& type, WireType w) {
    absl::MutexLock lock(&mu_);
    types_.try_emplace(type.name(), w);
  }
  std::optional<WireType> find(absl::string_view name) const {
    absl::ReaderMutexLock lock(&mu_);
    auto it = types_.find(name);
    if (it == types_.end()) return std::nullopt;
    return it->second;
  }

 private:
  template <class... T>
  void add_scalars() {
    (add(typeid(T), {&write_scalar<T>, &read_scalar<T>}), ...);
  }
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, WireType> types_;
};

// Never destroyed: Values may be made, and types registered, while the program's
// static objects are being destroyed.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// Counts the Values being written or read inside one another on this thread.
class Depth {
 public:
  Depth() {
    if (++depth_ > kMaxDepth) {
      --depth_;
      throw Error(absl::StrCat("a Value nests more than ", kMaxDepth, " levels deep; it cannot travel"));
    }
  }
  ~Depth() { --depth_; }
  Depth(const Depth&) = delete;
  Depth& operator=(const Depth&) = delete;

 private:
  static thread_local int depth_;
};
thread_local int Depth::depth_ = 0;

}  // namespace

bool detail::register_wire_type(const std::type_info& type, Reload reload) {
  registry().add(type, {&write_spillable, reload});
  return true;
}

void to_wire(const Value& v, SpillWriter& w) {
  Depth depth;
  if (!v.has_value()) {
    w.put<uint32_t>(0);
    return;
  }
  const char* name = v.type().name();
  const std::optional<WireType> type = registry().find(name);
  if (!type) {
    const std::string t = v.type_name();
    throw TypeError(absl::StrCat("cannot send a value of type ", t,
                                 " to another process: it has no wire form (specialize tessera::Spillable<", t,
                                 ">, see tessera/graph/spill.hpp)"));
  }
  const auto length = static_cast<uint32_t>(std::strlen(name));
  w.put(length);
  w.write(name, length);
  type->write(v, w);
}

std::vector<std::byte> to_wire(const Value& v) {
  BytesWriter w;
  to_wire(v, w);
  return std::move(w.bytes());
}

Value from_wire(SpillReader& r) {
  Depth depth;
  const auto length = r.get<uint32_t>();
  if (length == 0) return Value();
  if (length > kMaxNameLength) {
    throw Error(absl::StrCat("a serialized value is damaged: expected a type name of at most ", kMaxNameLength,
                             " bytes, found a length of ", length));
  }
  std::string name(length, '\0');
  r.read(name.data(), length);
  const std::optional<WireType> type = registry().find(name);
  if (!type) {
    throw Error(absl::StrCat("a serialized value has type ", detail::demangle(name.c_str()),
                             ", which this process does not know (is it the same program?)"));
  }
  return type->read(r);
}

}  // namespace tessera
