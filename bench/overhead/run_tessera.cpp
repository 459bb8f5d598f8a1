#include "run_tessera.hpp"

#include <chrono>
#include <ctime>

#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::bench {

namespace {

GetOptions with_workers(int workers, size_t memory_limit) {
  GetOptions o;
  o.num_workers = workers;
  o.memory_limit = memory_limit;
  return o;
}

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int64_t sum_of(const Result& r) {
  int64_t s = 0;
  for (const Result& item : r.items()) s += item.as<int64_t>();
  return s;
}

}  // namespace

TesseraRunner::TesseraRunner(const DagShape& shape, int workers)
    : shape_(shape), workers_(workers), graph_(build_graph(shape)), outputs_(output_keys(shape)),
      plan_(graph_, Keys(outputs_)) {}

double TesseraRunner::run(size_t memory_limit) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_now();
  const Result r = get(plan_, with_workers(workers_, memory_limit));
  run_cpu_s_ = cpu_now() - c0;
  const double s = seconds_since(t0);
  checksum_ = sum_of(r);
  return s;
}

double TesseraRunner::end_to_end() {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_now();
  const Graph g = build_graph(shape_);
  build_s_ = seconds_since(t0);
  build_cpu_s_ = cpu_now() - c0;
  const Plan plan(g, Keys(outputs_));  // cull + order + the dense form
  plan_s_ = seconds_since(t0) - build_s_;
  plan_cpu_s_ = cpu_now() - c0 - build_cpu_s_;
  const Result r = get(plan, with_workers(workers_, 0));
  const double s = seconds_since(t0);
  e2e_cpu_s_ = cpu_now() - c0;
  checksum_ = sum_of(r);
  return s;
}

}  // namespace tessera::bench
