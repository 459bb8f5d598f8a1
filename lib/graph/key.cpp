#include "tessera/graph/key.hpp"

#include <memory>

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <mutex>

namespace tessera {
namespace {

// A task graph reuses a few names for millions of keys, so interning makes keys
// small and equality a pointer compare. Names are counted, not kept forever:
// every compute() makes a fresh name, and a process that computes millions of
// arrays would otherwise grow without bound. A count reaches zero only under
// the table's lock (Key::release goes there for the last holder), so a name is
// never revived while it is being freed.
//
// The lock is a std::mutex, not an absl::Mutex: every Key made from a string
// takes it, and Debian's Abseil checks each absl::Mutex acquisition for lock
// cycles (a graph of lock ids per acquisition), which cost a graph file's
// reader more than the table's lookup itself.
class NameTable {
 public:
  // A holder of `name`: a new entry, or the existing one with one more count.
  const detail::InternedName* acquire(std::string_view name) {
    std::lock_guard lock(mu_);
    auto it = names_.find(name);
    if (it != names_.end()) {
      (*it)->refs.fetch_add(1, std::memory_order_relaxed);
      return it->get();
    }
    auto owned = std::make_unique<const detail::InternedName>(name);
    const detail::InternedName* p = owned.get();
    names_.insert(std::move(owned));
    return p;
  }

  void release(const detail::InternedName* n) {
    std::lock_guard lock(mu_);
    if (n->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    auto it = names_.find(std::string_view(n->text));
    names_.erase(it);  // frees n
  }

  size_t size() {
    std::lock_guard lock(mu_);
    return names_.size();
  }

 private:
  using Entry = std::unique_ptr<const detail::InternedName>;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
    size_t operator()(const Entry& s) const { return (*this)(s->text); }
  };
  struct Eq {
    using is_transparent = void;
    static std::string_view view(std::string_view s) { return s; }
    static std::string_view view(const Entry& s) { return s->text; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const { return view(a) == view(b); }
  };
  std::mutex mu_;
  absl::flat_hash_set<Entry, Hash, Eq> names_;
};

NameTable& names() {
  static auto* table = new NameTable;  // never destroyed: keys may outlive static teardown
  return *table;
}

std::string python_repr(std::string_view s) {
  std::string out = "'";
  out.append(s);
  out += '\'';
  return out;
}

}  // namespace

// A pinned name keeps the count it was acquired with, so no Key ever releases
// it to zero.
const std::string* detail::intern(std::string_view name) { return &names().acquire(name)->text; }

void detail::release_name(const InternedName* n) { names().release(n); }

size_t detail::interned_name_count() { return names().size(); }

Key::Key(std::string_view name) : name_(names().acquire(name)) {}

Key::Key(std::string_view name, std::span<const int64_t> index)
    : name_(names().acquire(name)), index_(index), tuple_(true) {}

std::string Key::str() const {
  if (!tuple_) return std::string(name());
  if (index_.empty()) return absl::StrCat("(", python_repr(name()), ",)");
  return absl::StrCat("(", python_repr(name()), ", ", absl::StrJoin(index_, ", "), ")");
}

std::string Key::brief(size_t max) const {
  std::string s = str();
  if (s.size() <= max) return s;
  const size_t full = s.size();
  s.resize(max);
  absl::StrAppend(&s, "... (", full, " characters)");
  return s;
}

std::string Key::json() const {
  // Names in dask graphs are identifiers and hex tokens; escape the two JSON
  // metacharacters anyway so the text always parses.
  std::string escaped;
  for (char c : name()) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  if (!tuple_) return absl::StrCat("\"", escaped, "\"");
  std::string out = absl::StrCat("[\"", escaped, "\"");
  for (int64_t i : index_) absl::StrAppend(&out, ", ", i);
  out += "]";
  return out;
}

std::strong_ordering operator<=>(const Key& a, const Key& b) {
  if (a.tuple_ != b.tuple_) {
    // Python cannot compare str with tuple; dask's sortkey falls back to str().
    return a.str() <=> b.str();
  }
  if (a.name_ != b.name_) {
    if (auto c = a.name() <=> b.name(); c != 0) return c;
  }
  return std::lexicographical_compare_three_way(a.index_.begin(), a.index_.end(),
                                                b.index_.begin(), b.index_.end());
}

std::ostream& operator<<(std::ostream& os, const Key& k) { return os << k.str(); }

size_t Key::hash() const { return absl::HashOf(*this); }

}  // namespace tessera
