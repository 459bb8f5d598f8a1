#include "tessera/graph/key.hpp"

#include <memory>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/synchronization/mutex.h>

namespace tessera {
namespace {

// Names live for the life of the process; a task graph reuses a few names for
// millions of keys, so interning makes keys small and equality a pointer compare.
class NameTable {
 public:
  const std::string* intern(std::string_view name) {
    absl::MutexLock lock(&mu_);
    auto it = names_.find(name);
    if (it != names_.end()) return it->get();
    auto owned = std::make_unique<const std::string>(name);
    const std::string* p = owned.get();
    names_.insert(std::move(owned));
    return p;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
    size_t operator()(const std::unique_ptr<const std::string>& s) const { return (*this)(*s); }
  };
  struct Eq {
    using is_transparent = void;
    static std::string_view view(std::string_view s) { return s; }
    static std::string_view view(const std::unique_ptr<const std::string>& s) { return *s; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const { return view(a) == view(b); }
  };
  absl::Mutex mu_;
  absl::flat_hash_set<std::unique_ptr<const std::string>, Hash, Eq> names_;
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

const std::string* detail::intern(std::string_view name) { return names().intern(name); }

Key::Key(std::string_view name) : name_(detail::intern(name)) {}

Key::Key(std::string_view name, absl::Span<const int64_t> index)
    : name_(detail::intern(name)), index_(index.begin(), index.end()), tuple_(true) {}

std::string Key::str() const {
  if (!tuple_) return *name_;
  if (index_.empty()) return absl::StrCat("(", python_repr(*name_), ",)");
  return absl::StrCat("(", python_repr(*name_), ", ", absl::StrJoin(index_, ", "), ")");
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
  for (char c : *name_) {
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

}  // namespace tessera
