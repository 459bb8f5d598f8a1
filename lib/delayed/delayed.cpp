#include "tessera/delayed/delayed.hpp"

#include <dlfcn.h>

#include <bit>
#include <cstdint>
#include <sstream>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include "diagnostics/write_file.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/key_split.hpp"
#include "tessera/graph/token.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/keys.hpp"

namespace tessera {

Lazy::Lazy(Key key, std::shared_ptr<const Graph> fragment, std::vector<Lazy> deps) {
  if (fragment == nullptr || !fragment->contains(key)) {
    throw MissingKeyError(key, std::nullopt, "a lazy value whose graph fragment does not define its key");
  }
  state_ = std::make_shared<const State>(State{std::move(key), std::move(fragment), std::move(deps)});
}

Graph merged_graph(const std::vector<Lazy>& values) {
  Graph out;
  // Walked with an explicit stack: a chain of calls may be as long as the input.
  absl::flat_hash_set<const Lazy::State*> seen_states;
  absl::flat_hash_set<const Graph*> seen_fragments;
  std::vector<const Lazy::State*> stack;
  for (const Lazy& v : values) stack.push_back(v.state_.get());
  while (!stack.empty()) {
    const Lazy::State* s = stack.back();
    stack.pop_back();
    if (!seen_states.insert(s).second) continue;
    if (seen_fragments.insert(s->fragment.get()).second) {
      const Graph& f = *s->fragment;
      for (uint32_t i = 0; i < f.size(); ++i) {
        // Equal keys are equal calls (keys are tokens of the call), so the first stays.
        if (!out.contains(f.key(i))) out.set(f.key(i), f.node(i));
      }
    }
    for (const Lazy& d : s->deps) stack.push_back(d.state_.get());
  }
  return out;
}

Graph Lazy::graph() const { return merged_graph({*this}); }

Value Lazy::compute_value(const GetOptions& options) const {
  return detail::compute_values({*this}, options).at(0);
}

namespace detail {

std::vector<Value> compute_values(const std::vector<Lazy>& values, const GetOptions& options) {
  Graph g = merged_graph(values);
  std::vector<Keys> keys;
  keys.reserve(values.size());
  for (const Lazy& v : values) keys.emplace_back(v.key());
  Result r = get(g, Keys(std::move(keys)), options);
  std::vector<Value> out;
  out.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) out.push_back(r[i].value());
  return out;
}

std::optional<std::string> hash_part(const Lazy& x) { return "key:" + x.key().str(); }
std::optional<std::string> hash_part(const std::string& x) {
  return absl::StrCat("str:", x.size(), ":", x);
}
std::optional<std::string> hash_part(std::string_view x) { return hash_part(std::string(x)); }
std::optional<std::string> hash_part(const char* x) { return hash_part(std::string(x)); }
std::optional<std::string> hash_part(bool x) { return x ? "bool:1" : "bool:0"; }
std::optional<std::string> hash_part(int64_t x) { return absl::StrCat("int:", x); }
std::optional<std::string> hash_part(uint64_t x) { return absl::StrCat("uint:", x); }
// By bits, so 0.0 and -0.0 (different values to a function) differ, and NaN hashes.
std::optional<std::string> hash_part(double x) {
  return absl::StrCat("double:", std::bit_cast<uint64_t>(x));
}

std::string function_pointer_identity(const void* f) {
  Dl_info info{};
  const auto address = reinterpret_cast<uintptr_t>(f);
  // dladdr names the loaded file holding `f` and its base; a static program without the
  // dynamic loader's tables has no ASLR to undo, so the address itself is stable there.
  if (dladdr(f, &info) == 0 || info.dli_fbase == nullptr) return "fn@" + std::to_string(address);
  const std::string file = info.dli_fname != nullptr ? info.dli_fname : "";
  const size_t slash = file.rfind('/');
  return "fn:" + file.substr(slash == std::string::npos ? 0 : slash + 1) + "+" +
         std::to_string(address - reinterpret_cast<uintptr_t>(info.dli_fbase));
}

Key call_key(std::string_view function_name, const std::optional<std::string>& identity,
             const std::vector<std::optional<std::string>>& parts) {
  std::string tok;
  bool hashable = identity.has_value();
  std::vector<std::string_view> all;
  if (hashable) all.push_back(*identity);
  for (const auto& p : parts) {
    if (!p) {
      hashable = false;
      break;
    }
    all.push_back(*p);
  }
  if (hashable) {
    // token() takes an initializer list; join with a separator no part can fake
    // (string parts carry their length).
    std::string joined;
    for (std::string_view p : all) absl::StrAppend(&joined, p.size(), "#", std::string(p), "|");
    tok = token({"delayed", joined});
  } else {
    tok = unique_token();
  }
  return Key(absl::StrCat(std::string(function_name), "-", tok));
}

}  // namespace detail

namespace {

// Text inside a dot string: quotes and backslashes escaped.
std::string dot_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
std::string dot_quote(std::string_view s) { return "\"" + dot_escape(s) + "\""; }

}  // namespace

std::string to_dot(const std::vector<Lazy>& values) {
  Graph g = merged_graph(values);
  std::string out = "digraph tessera {\n  rankdir=BT;\n";
  for (uint32_t i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    // Labels as dask's visualize: the key without its token (key_split) plus its indices;
    // a task shows its function, and the key's label below when that differs.
    const std::string key = key_label(g.key(i));
    std::string label = dot_quote(key);
    std::string shape = "box";
    if (n.is_task()) {
      const std::string& func = n.task().function_name();
      label = func == key ? dot_quote(func) : absl::StrCat("\"", dot_escape(func), "\\n", dot_escape(key), "\"");
      shape = "ellipse";
    }
    absl::StrAppend(&out, "  ", dot_quote(g.key(i).str()), " [label=", label,
                    ", shape=", shape, "];\n");
  }
  for (uint32_t i = 0; i < g.size(); ++i) {
    for (const Key& d : g.dependencies(i)) {
      absl::StrAppend(&out, "  ", dot_quote(d.str()), " -> ", dot_quote(g.key(i).str()), ";\n");
    }
  }
  return out + "}\n";
}

void visualize(const std::vector<Lazy>& values, const std::string& path) {
  diagnostics::detail::write_file(path, to_dot(values));
}

}  // namespace tessera
