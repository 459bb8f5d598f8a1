#include "tessera/graph_file/graph_file.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"

namespace tessera {
namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const { throw StorageError(path_, what); }

  json parse() const {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw StorageError(path_, "cannot open graph file", errno);
    try {
      return json::parse(in);
    } catch (const json::exception& e) {
      fail(std::string("not valid JSON: ") + e.what());
    }
  }

  const json& field(const json& obj, const char* name, const std::string& where) const {
    auto it = obj.find(name);
    if (it == obj.end()) fail(where + " has no \"" + name + "\" field");
    return *it;
  }

  // A key is a string, or an array of a string and indices (a tuple key). Key
  // indices are integers; dask also makes keys such as ('cumsum-1f', 'extra', 0)
  // or ('getitem-9a', 9.9, 9): their elements up to the last non-integer one are
  // folded into the name, joined by '/' ("cumsum-1f/extra", {0}).
  Key key(const json& j, const std::string& where) const {
    if (j.is_string()) return Key(j.get<std::string>());
    if (!j.is_array() || j.empty() || !j[0].is_string()) {
      fail(where + ": expected a key (a string or [name, i, ...]), found " + j.dump());
    }
    size_t first_index = 1;
    for (size_t i = 1; i < j.size(); ++i) {
      if (j[i].is_string() || j[i].is_number_float()) {
        first_index = i + 1;
      } else if (!j[i].is_number_integer()) {
        fail(where + ": expected key elements that are strings or numbers, found " + j.dump());
      }
    }
    std::string name = j[0].get<std::string>();
    for (size_t i = 1; i < first_index; ++i) {
      name += '/';
      name += j[i].is_string() ? j[i].get<std::string>() : j[i].dump();
    }
    std::vector<int64_t> index;
    for (size_t i = first_index; i < j.size(); ++i) index.push_back(j[i].get<int64_t>());
    return Key(name, index);
  }

  template <class T>
  std::optional<T> optional_number(const json& obj, const char* name) const {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
      fail(std::string("reference.") + name + ": expected a non-negative integer, found " + it->dump());
    }
    return it->get<T>();
  }

  size_t nbytes(const json& t, const std::string& where) const {
    const json& b = field(t, "nbytes", where);
    if (!b.is_number_integer() || b.get<int64_t>() < 0) {
      fail(where + ": expected a non-negative integer \"nbytes\", found " + b.dump());
    }
    return b.get<size_t>();
  }

  GraphReference reference(const json& r) const {
    if (!r.is_object()) fail("\"reference\": expected an object, found " + r.dump());
    GraphReference ref;
    if (auto it = r.find("tool"); it != r.end() && it->is_string()) ref.tool = it->get<std::string>();
    if (auto it = r.find("dask_order"); it != r.end()) {
      if (!it->is_object()) fail("reference.dask_order: expected an object");
      for (const auto& [text, prio] : it->items()) {
        json k;
        try {
          k = json::parse(text);
        } catch (const json::exception&) {
          fail("reference.dask_order: the name " + text + " is not a key in JSON text");
        }
        if (!prio.is_number_integer()) fail("reference.dask_order: expected integer priorities");
        ref.dask_order.emplace(key(k, "reference.dask_order"), prio.get<uint32_t>());
      }
    }
    ref.order_max_pressure = optional_number<uint32_t>(r, "order_max_pressure");
    ref.sync_max_held = optional_number<uint32_t>(r, "sync_max_held");
    ref.sync_max_held_bytes = optional_number<uint64_t>(r, "sync_max_held_bytes");
    return ref;
  }

  GraphFile load() const {
    const json doc = parse();
    if (!doc.is_object()) fail("expected a JSON object at the top level");
    const json& format = field(doc, "format", "the file");
    if (format != "tessera-graph/1") fail("expected format \"tessera-graph/1\", found " + format.dump());
    GraphFile out;
    if (auto it = doc.find("name"); it != doc.end() && it->is_string()) out.name = it->get<std::string>();
    if (auto it = doc.find("source"); it != doc.end() && it->is_string()) out.source = it->get<std::string>();
    const json& tasks = field(doc, "tasks", "the file");
    if (!tasks.is_array()) fail("\"tasks\": expected an array");
    out.graph.reserve(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      out.nbytes.push_back(add_task(out.graph, tasks[i], "tasks[" + std::to_string(i) + "]"));
    }
    check_dependencies(out.graph);
    const json& outputs = field(doc, "outputs", "the file");
    if (!outputs.is_array()) fail("\"outputs\": expected an array of keys");
    for (const json& o : outputs) {
      Key k = key(o, "outputs");
      if (!out.graph.contains(k)) throw MissingKeyError(k, std::nullopt, path_ + ": outputs");
      out.outputs.push_back(std::move(k));
    }
    if (auto it = doc.find("reference"); it != doc.end()) out.reference = reference(*it);
    return out;
  }

 private:
  size_t add_task(Graph& g, const json& t, const std::string& where) const {
    if (!t.is_object()) fail(where + ": expected an object, found " + t.dump());
    Key k = key(field(t, "key", where), where + ".key");
    if (g.contains(k)) fail(where + ": the key " + k.str() + " appears twice");
    const json& func = field(t, "func", where);
    if (!func.is_string()) fail(where + ": expected a string \"func\"");
    const size_t size = nbytes(t, where);
    const json& deps = field(t, "deps", where);
    if (!deps.is_array()) fail(where + ": expected an array \"deps\"");
    // dask exports a key that names another key (an alias) or a list of keys
    // as `literal` with dependencies: the first becomes an alias, the second a
    // task; only a literal without dependencies is data.
    if (func == "literal" && deps.empty()) {
      g.put(k, Value(SyntheticResult{std::vector<std::byte>(size)}));
      return size;
    }
    if (func == "literal" && deps.size() == 1) {
      g.alias(k, key(deps[0], where + ".deps"));
      return size;
    }
    std::vector<Arg> args;
    args.reserve(deps.size());
    for (const json& d : deps) args.emplace_back(ref(key(d, where + ".deps")));
    auto make = [size](absl::Span<const Value> inputs) {
      // Read every input, as a real task would, then make the result.
      size_t seen = 0;
      for (const Value& v : inputs) seen += v.nbytes();
      (void)seen;
      return SyntheticResult{std::vector<std::byte>(size)};
    };
    g.put(k, Task::from_args(fn(func.get<std::string>(), make), std::move(args)));
    return size;
  }

  void check_dependencies(const Graph& g) const {
    for (uint32_t i = 0; i < g.size(); ++i) {
      for (const Key& d : g.dependencies(i)) {
        if (!g.contains(d)) throw MissingKeyError(d, g.key(i), path_);
      }
    }
    std::vector<Key> cycle = find_cycle(g);
    if (!cycle.empty()) throw CycleError(std::move(cycle), path_);
  }

  std::string path_;
};

}  // namespace

GraphFile load_graph_file(const std::string& path) { return Reader(path).load(); }

}  // namespace tessera
