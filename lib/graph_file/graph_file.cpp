// The tessera-graph/1 reader. It streams the file with simdjson's On Demand
// parser, turning each task into a graph node as it is read: no DOM of the whole
// file is built, which on a 200,000-task file cost more than running the graph.
// Input is hostile until checked: nothing is walked recursively (simdjson skips
// unknown values by counting brackets), anything nested inside a key is refused,
// and every message quotes at most a short prefix of the offending value. A literal's `nbytes` is only
// recorded; a task allocates its result when it runs (unless the file was loaded
// with ResultMemory::counted), and check_memory_limit compares the recorded
// sizes with a run's limit before any of it is allocated.
#include "tessera/graph_file/graph_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include <simdjson.h>

#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera {
namespace {

namespace od = simdjson::ondemand;

// Longest prefix of a value quoted in a message.
constexpr size_t kQuoteChars = 40;

// Where a value sits in the file, for messages: `tasks[3].deps`. Spelled out
// only when a message is made; building the text for every key read cost the
// reader an allocation per key.
struct Where {
  static constexpr size_t kNoIndex = SIZE_MAX;
  const char* part;               // "tasks", "outputs", "reference." ...
  size_t index = kNoIndex;        // tasks[index]
  const char* field = "";         // ".key", or the name after "reference."
  std::string str() const {
    std::string s = part;
    if (index != kNoIndex) {
      s += '[';
      s += std::to_string(index);
      s += ']';
    }
    return s + field;
  }
  Where at(const char* f) const { return {part, index, f}; }
};

class Reader {
 public:
  Reader(std::string path, ResultMemory results) : path_(std::move(path)), results_(results) {}

  GraphFile load() {
    read_file();
    od::document doc;
    check(parser_.iterate(text_).get(doc));
    od::json_type top_type{};
    check(doc.type().get(top_type));
    od::object top;
    if (top_type != od::json_type::object) fail("expected a JSON object at the top level");
    check(doc.get_object().get(top));
    GraphFile out;
    bool have_format = false, have_tasks = false, have_outputs = false;
    for (auto field : top) {
      std::string_view name;
      check(field.unescaped_key().get(name));
      od::value v;
      check(field.value().get(v));
      if (name == "format") {
        const char* at = start_of(v);
        if (type_of(v) != od::json_type::string || string_of(v) != "tessera-graph/1") {
          fail("expected format \"tessera-graph/1\", found " + quote(at));
        }
        have_format = true;
      } else if (name == "name") {
        if (type_of(v) == od::json_type::string) out.name = std::string(string_of(v));
      } else if (name == "source") {
        if (type_of(v) == od::json_type::string) out.source = std::string(string_of(v));
      } else if (name == "tasks") {
        tasks(v, out);
        have_tasks = true;
      } else if (name == "outputs") {
        outputs(v, out);
        have_outputs = true;
      } else if (name == "reference") {
        out.reference = reference(v);
      }
    }
    // After the top-level object, only whitespace.
    if (!doc.current_location().error()) check(simdjson::TRAILING_CONTENT);
    if (!have_format) fail("the file has no \"format\" field");
    if (!have_tasks) fail("the file has no \"tasks\" field");
    if (!have_outputs) fail("the file has no \"outputs\" field");
    out.compiled = checked_compile(out.graph);
    for (const Key& k : out.outputs) {
      if (!out.graph.contains(k)) throw MissingKeyError(k, std::nullopt, path_ + ": outputs");
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw StorageError(path_, what); }

  void read_file() {
    const simdjson::error_code err = simdjson::padded_string::load(path_).get(text_);
    if (err == simdjson::IO_ERROR) throw StorageError(path_, "cannot open graph file", errno);
    if (err) fail(std::string("cannot read graph file: ") + simdjson::error_message(err));
    end_ = text_.data() + text_.size();
  }

  // Every error simdjson reports is a fault of the text (the file was read whole).
  void check(simdjson::error_code err) const {
    if (err == simdjson::SUCCESS) return;
    if (err == simdjson::DEPTH_ERROR) {
      fail("not valid JSON: nested deeper than " + std::to_string(simdjson::DEFAULT_MAX_DEPTH) + " levels");
    }
    fail(std::string("not valid JSON: ") + simdjson::error_message(err));
  }

  od::json_type type_of(od::value& v) const {
    od::json_type t{};
    check(v.type().get(t));
    return t;
  }
  std::string_view string_of(od::value& v) const {
    std::string_view s;
    check(v.get_string().get(s));
    return s;
  }
  // Where `v`'s text starts in the file (call before consuming `v`).
  const char* start_of(od::value& v) const {
    std::string_view token = v.raw_json_token();
    return token.data();
  }
  // The text at `at`, at most kQuoteChars of it.
  std::string quote(const char* at) const {
    const size_t left = static_cast<size_t>(end_ - at);
    std::string s(at, std::min(left, kQuoteChars));
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
    if (left > kQuoteChars) s += "...";
    // A prefix of a string or container: cut at the end of the first token.
    if (!s.empty() && s[0] != '[' && s[0] != '{' && s[0] != '"') {
      const size_t stop = s.find_first_of(",]} \n\r\t");
      if (stop != std::string::npos) s.resize(stop);
    } else if (!s.empty() && s[0] == '"') {
      const size_t close = s.find('"', 1);
      if (close != std::string::npos) s.resize(close + 1);
    }
    return s;
  }

  uint64_t non_negative(od::value& v, const Where& where) const {
    const char* at = start_of(v);
    if (type_of(v) == od::json_type::number) {
      od::number_type t{};
      check(v.get_number_type().get(t));
      uint64_t n = 0;
      if (t == od::number_type::unsigned_integer || t == od::number_type::signed_integer) {
        int64_t s = 0;
        if (t == od::number_type::signed_integer && !v.get_int64().get(s) && s >= 0) return static_cast<uint64_t>(s);
        if (t == od::number_type::unsigned_integer && !v.get_uint64().get(n)) return n;
      }
    }
    fail(where.str() + ": expected a non-negative integer, found " + quote(at));
  }

  // A key is a string, or an array of a string and indices (a tuple key). Key
  // indices are integers; dask also makes keys such as ('cumsum-1f', 'extra', 0)
  // or ('getitem-9a', 9.9, 9): their elements up to the last non-integer one are
  // folded into the name, joined by '/' ("cumsum-1f/extra", {0}). Anything
  // nested inside a key is refused, so a key's depth is at most one.
  Key key(od::value& v, const Where& where) const {
    const char* at = start_of(v);
    const od::json_type t = type_of(v);
    if (t == od::json_type::string) return Key(string_of(v));
    auto bad = [&](const char* expected) { fail(where.str() + ": expected " + expected + ", found " + quote(at)); };
    if (t != od::json_type::array) bad("a key (a string or [name, i, ...])");
    od::array arr;
    check(v.get_array().get(arr));
    // Elements: strings and floats (folded into the name) or integers.
    std::string name;
    bool first = true;
    index_.clear();
    for (auto element : arr) {
      od::value e;
      check(element.get(e));
      const char* eat = start_of(e);
      const od::json_type et = type_of(e);
      if (first) {
        if (et != od::json_type::string) bad("a key (a string or [name, i, ...])");
        name = std::string(string_of(e));
        first = false;
        continue;
      }
      std::string piece;
      if (et == od::json_type::string) {
        piece = std::string(string_of(e));
      } else if (et == od::json_type::number) {
        od::number_type nt{};
        check(e.get_number_type().get(nt));
        int64_t i = 0;
        if (nt == od::number_type::signed_integer && !e.get_int64().get(i)) {
          index_.push_back(i);
          continue;
        }
        if (nt == od::number_type::unsigned_integer) {
          fail(where.str() + ": key index " + quote(eat) + " does not fit in a signed 64-bit integer");
        }
        piece = quote(eat);  // a float: its text, as dask prints it
      } else {
        fail(where.str() + ": expected key elements that are strings or numbers, found " + quote(eat));
      }
      // A non-integer element: fold it and every index before it into the name.
      for (int64_t i : index_) name += '/' + std::to_string(i);
      index_.clear();
      name += '/';
      name += piece;
    }
    if (first) bad("a key (a string or [name, i, ...])");
    return Key(name, index_);
  }

  void tasks(od::value& v, GraphFile& out) {
    if (type_of(v) != od::json_type::array) fail("\"tasks\": expected an array");
    od::array arr;
    check(v.get_array().get(arr));
    // Sizing the graph up front spares rehashing every key as it grows.
    size_t count = 0;
    check(arr.count_elements().get(count));
    out.graph.reserve(count);
    out.nbytes.reserve(count);
    size_t i = 0;
    for (auto element : arr) {
      od::value t;
      check(element.get(t));
      out.nbytes.push_back(add_task(out.graph, t, Where{"tasks", i}));
      ++i;
    }
  }

  uint64_t add_task(Graph& g, od::value& t, const Where& where) {
    const char* at = start_of(t);
    if (type_of(t) != od::json_type::object) fail(where.str() + ": expected an object, found " + quote(at));
    od::object obj;
    check(t.get_object().get(obj));
    std::optional<Key> k;
    std::optional<std::string_view> func;  // in the parser's buffer, which outlives the parse
    std::optional<uint64_t> size;
    bool have_deps = false;
    std::vector<Key>& deps = deps_;  // one buffer for all tasks: no allocation per task
    deps.clear();
    for (auto field : obj) {
      std::string_view name;
      check(field.unescaped_key().get(name));
      od::value v;
      check(field.value().get(v));
      if (name == "key") {
        k = key(v, where.at(".key"));
      } else if (name == "func") {
        if (type_of(v) != od::json_type::string) fail(where.str() + ": expected a string \"func\"");
        func = string_of(v);
      } else if (name == "nbytes") {
        size = non_negative(v, where.at(".nbytes"));
      } else if (name == "deps") {
        if (type_of(v) != od::json_type::array) fail(where.str() + ": expected an array \"deps\"");
        od::array arr;
        check(v.get_array().get(arr));
        for (auto d : arr) {
          od::value dv;
          check(d.get(dv));
          deps.push_back(key(dv, where.at(".deps")));
        }
        have_deps = true;
      }
    }
    if (!k) fail(where.str() + " has no \"key\" field");
    if (!func) fail(where.str() + " has no \"func\" field");
    if (!size) fail(where.str() + " has no \"nbytes\" field");
    if (!have_deps) fail(where.str() + " has no \"deps\" field");
    if (g.contains(*k)) fail(where.str() + ": the key " + k->str() + " appears twice");
    const uint64_t nbytes = *size;
    // dask exports a key that names another key (an alias) or a list of keys
    // as `literal` with dependencies: the first becomes an alias, the second a
    // task; only a literal without dependencies is data. That data is never
    // read, only counted: it reports its size without holding it.
    if (*func == "literal" && deps.empty()) {
      g.put(*k, Value(SyntheticResult{nbytes, {}}));
      return nbytes;
    }
    if (*func == "literal" && deps.size() == 1) {
      g.alias(*k, deps[0]);
      return nbytes;
    }
    std::vector<Arg> args;
    args.reserve(deps.size());
    for (Key& d : deps) args.emplace_back(ref(std::move(d)));
    const bool allocate = results_ == ResultMemory::allocated;
    auto make = [nbytes, allocate](std::span<const Value> inputs) {
      // Read every input, as a real task would, then make the result.
      size_t seen = 0;
      for (const Value& v : inputs) seen += v.nbytes();
      (void)seen;
      return allocate ? SyntheticResult::allocate(nbytes) : SyntheticResult{nbytes, {}};
    };
    deps.clear();
    g.put(*k, Task::from_args(fn(std::string(*func), make), std::move(args)));
    return nbytes;
  }

  void outputs(od::value& v, GraphFile& out) {
    if (type_of(v) != od::json_type::array) fail("\"outputs\": expected an array of keys");
    od::array arr;
    check(v.get_array().get(arr));
    for (auto element : arr) {
      od::value o;
      check(element.get(o));
      out.outputs.push_back(key(o, Where{"outputs"}));
    }
  }

  std::optional<uint64_t> optional_figure(od::value& v, const char* name) const {
    if (type_of(v) == od::json_type::null) return std::nullopt;
    return non_negative(v, Where{"reference.", Where::kNoIndex, name});
  }

  GraphReference reference(od::value& r) {
    const char* at = start_of(r);
    if (type_of(r) != od::json_type::object) fail("\"reference\": expected an object, found " + quote(at));
    od::object obj;
    check(r.get_object().get(obj));
    GraphReference ref;
    for (auto field : obj) {
      std::string_view name;
      check(field.unescaped_key().get(name));
      od::value v;
      check(field.value().get(v));
      if (name == "tool") {
        if (type_of(v) == od::json_type::string) ref.tool = std::string(string_of(v));
      } else if (name == "dask_order") {
        dask_order(v, ref);
      } else if (name == "order_max_pressure") {
        ref.order_max_pressure = optional_figure(v, "order_max_pressure");
      } else if (name == "sync_max_held") {
        ref.sync_max_held = optional_figure(v, "sync_max_held");
      } else if (name == "sync_max_held_bytes") {
        ref.sync_max_held_bytes = optional_figure(v, "sync_max_held_bytes");
      }
    }
    return ref;
  }

  // Names in dask_order are keys as JSON text: each is parsed on its own,
  // wrapped in brackets so that a plain string key is an array element too.
  void dask_order(od::value& v, GraphReference& ref) {
    if (type_of(v) != od::json_type::object) fail("reference.dask_order: expected an object");
    od::object obj;
    check(v.get_object().get(obj));
    od::parser inner;
    std::string wrapped;
    for (auto field : obj) {
      std::string_view text;
      check(field.unescaped_key().get(text));
      od::value pv;
      check(field.value().get(pv));
      const uint64_t prio = non_negative(pv, Where{"reference.dask_order"});
      if (prio > std::numeric_limits<uint32_t>::max()) {
        fail("reference.dask_order: priority " + std::to_string(prio) + " is larger than 2^32 - 1");
      }
      wrapped.resize(text.size() + 2 + simdjson::SIMDJSON_PADDING);
      wrapped[0] = '[';
      std::memcpy(wrapped.data() + 1, text.data(), text.size());
      wrapped[text.size() + 1] = ']';
      Key k = parse_key_text(inner, {wrapped.data(), text.size() + 2}, text);
      ref.dask_order.emplace(std::move(k), static_cast<uint32_t>(prio));
    }
  }

  // `wrapped` is followed by SIMDJSON_PADDING bytes it owns.
  Key parse_key_text(od::parser& inner, std::string_view wrapped, std::string_view text) {
    auto bad = [&] {
      fail("reference.dask_order: the name " + std::string(text.substr(0, kQuoteChars)) +
           (text.size() > kQuoteChars ? "..." : "") + " is not a key in JSON text");
    };
    od::document d;
    od::array arr;
    if (inner.iterate(wrapped.data(), wrapped.size(), wrapped.size() + simdjson::SIMDJSON_PADDING).get(d) ||
        d.get_array().get(arr))
      bad();
    std::optional<Key> k;
    // Messages from key() quote this buffer, not the file's.
    const char* outer_end = end_;
    end_ = wrapped.data() + wrapped.size();
    try {
      for (auto element : arr) {
        od::value e;
        if (element.get(e) || k) bad();
        k = key(e, Where{"reference.dask_order"});
      }
    } catch (const StorageError&) {
      end_ = outer_end;
      bad();
    }
    end_ = outer_end;
    if (!k || !d.current_location().error()) bad();
    return *std::move(k);
  }

  // Every dependency a key of the file, and no cycle; the messages name the file.
  CompiledGraph checked_compile(const Graph& g) const {
    std::optional<CompiledGraph> c;
    try {
      c.emplace(compile(g));
    } catch (const MissingKeyError& e) {
      throw MissingKeyError(e.missing(), e.referrer(), path_);
    }
    std::vector<uint32_t> cycle = find_cycle(*c);
    if (!cycle.empty()) {
      std::vector<Key> keys;
      for (uint32_t i : cycle) keys.push_back(g.key(i));
      throw CycleError(std::move(keys), path_);
    }
    return *std::move(c);
  }

  std::string path_;
  ResultMemory results_;
  simdjson::padded_string text_;
  od::parser parser_;
  const char* end_ = nullptr;  // the end of the text quote() reads from
  mutable std::vector<int64_t> index_;
  std::vector<Key> deps_;  // of the task being read
};

}  // namespace

SyntheticResult SyntheticResult::allocate(uint64_t size) {
  SyntheticResult r;
  r.size = size;
  // A hostile file's nbytes (2^63) must not surface as "vector::_M_default_append".
  const auto too_big = [size] {
    return Error("expected a result of nbytes this process can allocate, found " + std::to_string(size) + " bytes");
  };
  if (size > r.data.max_size()) throw too_big();
  try {
    r.data.resize(size);
  } catch (const std::bad_alloc&) {
    throw too_big();
  }
  return r;
}

GraphFile load_graph_file(const std::string& path, ResultMemory results) { return Reader(path, results).load(); }

// One pass over the tasks and their edges: each task's distinct inputs are
// found with a stamp per task (no sort, no set), and sums saturate, since the
// sizes come from the file.
void check_memory_limit(const GraphFile& f, const Plan& plan, size_t memory_limit) {
  const uint32_t nt = plan.num_tasks();
  auto bytes = [&](uint32_t id) { return f.nbytes[plan.graph_id(id)]; };
  auto add = [](uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; };
  std::vector<uint32_t> stamp(nt, UINT32_MAX);
  for (uint32_t t = 0; t < nt; ++t) {
    uint64_t needed = bytes(t);
    for (uint32_t d : plan.dependencies(t)) {
      if (d >= nt || stamp[d] == t) continue;
      stamp[d] = t;
      needed = add(needed, bytes(d));
    }
    if (needed > memory_limit) {
      throw MemoryLimitError(plan.key(t), needed, memory_limit, 0, {}, "for its inputs and its result together");
    }
  }
  // The requested results, each once, in the request's order.
  std::vector<MemoryLimitError::Held> largest;
  uint64_t total = 0, count = 0;
  std::optional<uint32_t> first_over;
  uint64_t needed_at_first = 0;
  for (uint32_t r : plan.requested()) {
    if (r >= nt || stamp[r] == nt) continue;
    stamp[r] = nt;
    ++count;
    total = add(total, bytes(r));
    if (!first_over && total > memory_limit) {
      first_over = r;
      needed_at_first = total;
    }
    largest.push_back({plan.key(r), bytes(r)});
    std::sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    if (largest.size() > 3) largest.pop_back();
  }
  if (first_over) {
    throw MemoryLimitError(plan.key(*first_over), needed_at_first, memory_limit, 0, std::move(largest),
                           "with the requested results before it, all returned in memory together (" +
                               std::to_string(count) + " requested, " + std::to_string(total) + " bytes in all)");
  }
}

}  // namespace tessera
