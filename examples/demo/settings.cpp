#include "settings.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tessera/array/core/chunks.hpp"

namespace demo {
namespace {

namespace ta = tessera::array;

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(
      stderr,
      "demo: %s\nusage: demo [--size 4GiB] [--max-mem 512MiB] [--workers N] [--codec SPEC] [--dir DIR] [--keep] "
      "[--input IMAGE] [--report REPORT.html] [--dry-run [--ranks N]]\n",
      problem.c_str());
  std::exit(2);
}

}  // namespace

Settings parse(int argc, char** argv) {
  Settings s;
  const char* tmp = std::getenv("TMPDIR");
  s.dir = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--size") {
        s.size = ta::parse_bytes(value());
      } else if (a == "--max-mem") {
        s.max_mem = ta::parse_bytes(value());
      } else if (a == "--workers") {
        s.workers = std::stoi(value());
        s.workers_given = true;
      } else if (a == "--dir") {
        s.dir = value();
      } else if (a == "--codec") {
        s.codec = value();
      } else if (a == "--input") {
        s.input = value();
      } else if (a == "--report") {
        s.report = value();
      } else if (a == "--keep") {
        s.keep = true;
      } else if (a == "--dry-run") {
        s.dry_run = true;
      } else if (a == "--ranks") {
        s.ranks = std::stoi(value());
      } else {
        usage("unknown argument '" + a + "'");
      }
    } catch (const std::exception& e) {
      usage(a + ": " + e.what());
    }
  }
  if (s.size < (int64_t{1} << 20)) usage("--size must be at least 1MiB");
  if (s.max_mem < (int64_t{64} << 20)) usage("--max-mem must be at least 64MiB");
  if (s.workers < 1) usage("--workers must be at least 1");
  if (s.ranks < 1) usage("--ranks must be at least 1");
  if (s.ranks > 1 && !s.dry_run)
    usage("--ranks is for --dry-run; run across ranks with mpirun -n N (scripts/demo --ranks N)");
  return s;
}

}  // namespace demo
