// python/src/get.cpp — tessera.get: dask's scheduler protocol over tessera's C++ scheduler.
//
// The dask graph is converted once (convert.hpp); then the whole run — cull,
// order, the LIFO ready stack, release after the last reader, the memory budget
// and spilling — is tessera::get in C++ on a thread of its own, without the GIL.
// Only a task body takes the GIL (to call the Python function), and a result's
// last release (to drop its reference).
//
// The caller's thread waits with the GIL released and wakes every few tens of
// milliseconds to let Python run its signal handlers (PyErr_CheckSignals): a
// KeyboardInterrupt cancels the run through its CancellationToken and is raised
// in the caller at once; tasks still running after a moment are left to return
// on their own, their results dropped and the scratch folder removed then
// (watch.hpp's run_abandonable). A task's exception comes back as the original Python
// exception with its traceback. The Python side (tessera/__init__.py) adds what
// is dask's business: callbacks, configuration, high-level graphs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <oneapi/tbb/global_control.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "convert.hpp"
#include "mapped_buffer.hpp"
#include "python_stderr.hpp"
#include "pyvalue.hpp"
#include "watch.hpp"
#include "tessera/diagnostics/profiler.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/report.hpp"
#include "tessera/diagnostics/resource_profiler.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/fuse.hpp"
#include "tessera/optimize/order.hpp"
#include "tessera/scheduler/get.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {

// A Result as dask's nested_get gives it: a value, or a tuple per list.
py::object to_python(const Result& r) {
  if (!r.is_list()) return py::reinterpret_borrow<py::object>(object_of(r.value()));
  py::tuple t(r.size());
  for (size_t i = 0; i < r.size(); ++i) t[i] = to_python(r[i]);
  return t;
}

// Rethrows a run's error as Python sees it: a task's own Python exception
// (through `raise_exception(exc, tb)` when given, as dask's get_async does).
[[noreturn]] void rethrow_for_python(std::exception_ptr error, const py::object& raise_exception) {
  try {
    std::rethrow_exception(error);
  } catch (const TaskError& e) {
    try {
      e.rethrow_original();
    } catch (py::error_already_set& original) {
      if (!raise_exception.is_none()) {
        raise_exception(original.value(), original.trace());
      }
      throw;
    } catch (const std::exception& other) {
      throw std::runtime_error(e.what());
    }
  } catch (const CycleError& e) {
    throw std::runtime_error(std::string("Cycle detected in the task graph: ") + e.what());
  }
}

// Everything a run reads while it runs, on the heap: a run that Ctrl-C leaves
// running (run_abandonable) goes on after its caller has returned. Dropped with the GIL.
struct Job {
  Job(Converted converted, Keys requested) : c(std::move(converted)), keys(std::move(requested)) {}
  Converted c;
  Keys keys;
  GetOptions options;
  py::object hooks;
  PythonStderr stderr_stream;  // outlives the bar
  std::optional<diagnostics::ProgressBar> bar;
  std::optional<diagnostics::Profiler> profiler;
  std::optional<diagnostics::Report> report;
  std::optional<Result> result;
};

// The dask-side hooks (tessera/__init__.py's _State) called from C++ hooks; not
// once the caller has had its KeyboardInterrupt (its callbacks have finished).
Callbacks python_hooks(const Job& job) {
  Callbacks cb;
  if (job.hooks.is_none()) return cb;
  cb.pretask = [&job](const RunState& s, uint32_t task, int worker) {
    WorkerGil gil;
    if (job.options.cancel.cancelled()) return;
    job.hooks.attr("pretask")(job.c.python_key(s.key(task)), worker);
  };
  cb.posttask = [&job](const RunState& s, uint32_t task, const Value& result, int worker) {
    WorkerGil gil;
    if (job.options.cancel.cancelled()) return;
    job.hooks.attr("posttask")(job.c.python_key(s.key(task)), py::handle(object_of(result)), worker);
  };
  return cb;
}

// A failed run's report too, with its error at the top. A report that cannot be
// written now (its path was checked before the run) is a RuntimeWarning: the
// run's result, or its own error, is what the caller gets.
void write_report(diagnostics::Report& report, const std::string& path, const std::exception_ptr& error) {
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      report.record_error(e);
    } catch (...) {
      report.record_error("", "", "a task raised something that is not an exception");
    }
  }
  std::string failure;
  {
    py::gil_scoped_release unlocked;
    try {
      report.write_html(path);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (failure.empty()) return;
  const std::string message = "tessera: the report was not written: " + failure;
  if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) == 0) return;
  if (error) {
    PyErr_Clear();  // a warning made an error never masks the run's own
    return;
  }
  throw py::error_already_set();
}

py::object run(const py::dict& dsk, const py::object& request, int num_workers, const py::object& results_limit,
               const std::string& spill_dir, const py::object& cache, const py::object& hooks,
               bool rerun_exceptions_locally, const py::object& raise_exception, bool progress,
               const std::string& trace, const std::string& report_path, const std::string& command_line,
               const py::object& hold_fn) {
  // A report that cannot be written is found now, not after the run.
  if (!report_path.empty()) diagnostics::Report::check_path(report_path);
  auto policy = std::make_shared<ResultPolicy>();
  if (!results_limit.is_none()) policy->hold_fn = hold_fn;
  KeyMap key_map;
  Converted converted = convert(dsk, key_map, policy);
  auto job = std::make_shared<Job>(std::move(converted), convert_request(request, key_map));
  job->hooks = hooks;

  GetOptions& options = job->options;
  options.num_workers = num_workers;
  // What the process holds with the graph converted is not the results' room.
  options.memory_limit = results_limit.is_none() ? 0 : results_limit().cast<size_t>();
  // A running Python task holds its result and numpy's temporaries, often twice
  // as large: `(x - m) / s` stored to zarr holds x - m while it makes the
  // quotient, then zarr's encoded copy (bench/python arrays: standardize under a
  // third of dask's peak passed the limit by 8% with 2, stayed under with 3).
  options.task_footprint = 3.0;
  options.scratch_dir = spill_dir;
  options.rerun_exceptions_locally = rerun_exceptions_locally;
  if (!cache.is_none()) {
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(cache)) {
      Key key = key_map(k);
      if (!job->c.graph.contains(key)) continue;
      Py_INCREF(v.ptr());
      options.cache.emplace(std::move(key), Value::make<PyValue>(v.ptr(), size_t{0}));
    }
  }
  options.callbacks.push_back(python_hooks(*job));
  if (progress) options.callbacks.push_back(job->bar.emplace(progress_on(job->stderr_stream)).callbacks());
  if (!trace.empty()) options.callbacks.push_back(job->profiler.emplace().callbacks());
  if (!report_path.empty()) {
    options.callbacks.push_back(
        job->report.emplace(diagnostics::ReportOptions{.title = "tessera.get", .command_line = command_line})
            .callbacks());
  }

  std::exception_ptr error;
  py::object out;
  bool left_running = false;
  try {
    // Ctrl-C in the caller cancels the run and is raised at once (watch.hpp).
    run_abandonable(
        job, [](Job& j) { j.result.emplace(tessera::get(j.c.graph, j.keys, j.options)); }, options.cancel,
        left_running);
    out = to_python(*job->result);
  } catch (...) {
    if (left_running) throw;  // the run's thread owns the job now
    error = std::current_exception();
  }
  release_deferred();  // the inputs the run's last tasks dropped
  if (job->profiler) job->profiler->write_chrome_trace(trace);
  if (job->report) write_report(*job->report, report_path, error);
  if (error) rethrow_for_python(error, raise_exception);
  return out;
}

py::dict order(const py::dict& dsk) {
  KeyMap key_map;
  Converted c = convert(dsk, key_map, std::make_shared<ResultPolicy>());
  const std::vector<uint32_t> priorities = tessera::order(c.graph);
  py::dict out;
  for (size_t i = 0; i < priorities.size(); ++i) out[c.keys[i]] = priorities[i];
  return out;
}

// The keys `request` needs, each with the keys it reads: what dask.optimization.cull returns.
py::dict cull_dependencies(const py::dict& dsk, const py::object& request) {
  KeyMap key_map;
  Converted c = convert(dsk, key_map, std::make_shared<ResultPolicy>());
  const std::vector<Key> wanted = convert_request(request, key_map).flatten();
  const Graph kept = cull(c.graph, wanted);
  py::dict out;
  for (uint32_t i = 0; i < kept.size(); ++i) {
    py::set deps;
    for (const Key& d : kept.dependencies(i)) deps.add(c.python_key(d));
    out[c.python_key(kept.key(i))] = deps;
  }
  return out;
}

// What tessera's fuse merges in a dask graph: the chains (each a list of
// Python keys, top-down, the last the key that stays) and every remaining key
// with the keys it reads once the chains are merged (a chain reads what its
// first task reads). tessera.fuse composes the chains' tasks in Python.
py::tuple fuse_chains(const py::dict& dsk, const py::object& request) {
  KeyMap key_map;
  Converted c = convert(dsk, key_map, std::make_shared<ResultPolicy>());
  const std::vector<Key> keep = request.is_none() ? std::vector<Key>{} : convert_request(request, key_map).flatten();
  const CompiledGraph compiled = compile(c.graph);
  const uint32_t n = compiled.size();
  const std::vector<uint32_t> into = fuse_targets(c.graph, compiled, keep);
  std::vector<uint8_t> has_link(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (into[i] != n) has_link[into[i]] = 1;
  }
  py::list chains;
  py::dict dependencies;
  for (uint32_t i = 0; i < n; ++i) {
    if (into[i] != n) continue;
    uint32_t top = i;
    if (has_link[i]) {
      const std::vector<uint32_t> chain = fuse_chain(compiled, into, i);
      py::list keys;
      for (uint32_t id : chain) keys.append(c.keys[id]);
      chains.append(keys);
      top = chain.front();
    }
    py::set deps;
    for (const Key& d : c.graph.dependencies(top)) deps.add(c.python_key(d));
    dependencies[c.keys[i]] = deps;
  }
  return py::make_tuple(chains, dependencies);
}

// The stack of the scheduler's worker threads (oneTBB's, 4 MiB by default on
// 64-bit): a task body that recurses deeply in C (pickle of a deep list, a C
// extension) needs what a Python thread has, or it crashes the process. oneTBB
// reads the value when it starts its threads, so tessera.get sets it before each
// run; a larger value asked for later reaches threads started later.
size_t set_worker_stack(size_t bytes) {
  static std::unique_ptr<tbb::global_control> control;
  const auto active = [] { return tbb::global_control::active_value(tbb::global_control::thread_stack_size); };
  if (control == nullptr || bytes > active()) {
    control = std::make_unique<tbb::global_control>(tbb::global_control::thread_stack_size, bytes);
  }
  return active();
}

}  // namespace

void bind_mapped_buffer(py::module_& m) {
  py::class_<MappedBuffer>(m, "_MappedBuffer", py::buffer_protocol()).def_buffer([](MappedBuffer& b) {
    // Writable, as the array was before it spilled: the bytes are the reader's
    // own (a copy-on-write mapping of the scratch file, spill.hpp).
    static std::byte empty{};
    return py::buffer_info(b.data ? const_cast<std::byte*>(b.data.get()) : &empty, 1,
                           py::format_descriptor<uint8_t>::format(), 1, {static_cast<py::ssize_t>(b.size)}, {1},
                           /*readonly=*/false);
  });
}

void bind_get(py::module_& m) {
  bind_mapped_buffer(m);
  m.def("_run", &run, py::arg("dsk"), py::arg("keys"), py::arg("num_workers"), py::arg("results_limit"),
        py::arg("spill_dir"), py::arg("cache"), py::arg("hooks"), py::arg("rerun_exceptions_locally"),
        py::arg("raise_exception"), py::arg("progress"), py::arg("trace"), py::arg("report"), py::arg("command_line"),
        py::arg("hold"),
        "Runs a dask graph (a dict) on tessera's scheduler; tessera.get is the public entry.");
  m.def("_set_worker_stack", &set_worker_stack, py::arg("bytes"),
        "Gives the worker threads oneTBB starts from now on a stack of at least `bytes`; returns the stack in force.");
  m.def("_order", &order, py::arg("dsk"), "tessera's order priorities of a dask graph (a dict).");
  m.def("_cull_dependencies", &cull_dependencies, py::arg("dsk"), py::arg("keys"),
        "The keys that `keys` need, each with the keys it reads.");
  m.def("_fuse_chains", &fuse_chains, py::arg("dsk"), py::arg("keys"),
        "The chains tessera's fuse merges in a dask graph, and the dependencies once merged.");
  // The one reader of the process's RSS (statm) that the C++ budget and profilers use.
  m.def("_resident_bytes", &diagnostics::resident_bytes,
        "The process's resident memory in bytes now (0 when unknown).");
}

}  // namespace tessera::python
