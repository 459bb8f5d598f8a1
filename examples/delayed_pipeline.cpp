// delayed_pipeline — a small analytics pipeline written with tessera::delayed.
//
//   build/examples/delayed_pipeline [--files N] [--lines N] [--workers N] [--dot PATH]
//
// Generates N text files of `sensor,value` lines (in a new folder under $TMPDIR or
// /tmp, removed at the end), then builds the pipeline as plain function calls:
// load each file -> parse it into per-sensor statistics -> aggregate them all. No key is
// written by hand: `delayed` makes them. The graph runs on every core (or --workers)
// with a progress bar on stderr; the totals are checked against the ones counted while
// generating, and the program fails when they differ. `--dot` writes the graph.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tessera/delayed/delayed.hpp"
#include "tessera/diagnostics/progress.hpp"

namespace {

struct Stats {
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  void add(double v) {
    min = count == 0 ? v : std::min(min, v);
    max = count == 0 ? v : std::max(max, v);
    sum += v;
    ++count;
  }
  void merge(const Stats& o) {
    if (o.count == 0) return;
    min = count == 0 ? o.min : std::min(min, o.min);
    max = count == 0 ? o.max : std::max(max, o.max);
    sum += o.sum;
    count += o.count;
  }
};
using Summary = std::map<std::string, Stats>;

std::string load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Summary parse(const std::string& text) {
  Summary out;
  std::istringstream lines(text);
  std::string line;
  int64_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const size_t comma = line.find(',');
    if (comma == std::string::npos) {
      throw std::runtime_error("line " + std::to_string(number) + ": expected 'sensor,value', found '" +
                               line + "'");
    }
    out[line.substr(0, comma)].add(std::stod(line.substr(comma + 1)));
  }
  return out;
}

Summary aggregate(const std::vector<Summary>& parts) {
  Summary out;
  for (const Summary& p : parts) {
    for (const auto& [sensor, s] : p) out[sensor].merge(s);
  }
  return out;
}

int64_t flag(int argc, char** argv, const std::string& name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::stoll(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t files = flag(argc, argv, "--files", 8);
  const int64_t lines = flag(argc, argv, "--lines", 200000);
  const int workers = static_cast<int>(
      flag(argc, argv, "--workers", std::max(1u, std::thread::hardware_concurrency())));
  std::string dot;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--dot") dot = argv[i + 1];
  }

  // A folder of our own: only it is removed at the end.
  std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-pipeline-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::filesystem::path dir = tmpl;

  // Generate the inputs and count what the pipeline must find.
  const std::vector<std::string> sensors = {"north", "south", "east", "west", "roof"};
  std::map<std::string, int64_t> expected_count;
  std::vector<std::string> paths;
  uint64_t state = 12345;
  for (int64_t f = 0; f < files; ++f) {
    paths.push_back((dir / ("readings-" + std::to_string(f) + ".csv")).string());
    std::ofstream out(paths.back());
    for (int64_t l = 0; l < lines; ++l) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // a 64-bit LCG
      const std::string& s = sensors[(state >> 33) % sensors.size()];
      out << s << ',' << static_cast<double>((state >> 40) % 10000) / 100.0 << '\n';
      ++expected_count[s];
    }
  }

  // The pipeline: plain calls, recorded by delayed.
  std::vector<tessera::Delayed<Summary>> parsed;
  for (const std::string& p : paths) {
    auto text = tessera::delayed(TESSERA_FN(load))(p);
    parsed.push_back(tessera::delayed(TESSERA_FN(parse))(text));
  }
  tessera::Delayed<Summary> total = tessera::delayed(TESSERA_FN(aggregate))(parsed);
  if (!dot.empty()) tessera::visualize({total}, dot);

  tessera::diagnostics::ProgressBar bar;
  Summary result = total.compute({.num_workers = workers, .callbacks = {bar.callbacks()}});

  bool ok = true;
  std::printf("%-6s %10s %10s %8s %8s\n", "sensor", "count", "mean", "min", "max");
  for (const auto& [sensor, s] : result) {
    std::printf("%-6s %10lld %10.3f %8.2f %8.2f\n", sensor.c_str(), static_cast<long long>(s.count),
                s.sum / static_cast<double>(s.count), s.min, s.max);
    if (s.count != expected_count[sensor]) ok = false;
  }
  if (result.size() != expected_count.size()) ok = false;
  std::printf("%lld files, %lld lines, %d workers: %s\n", static_cast<long long>(files),
              static_cast<long long>(files * lines), workers, ok ? "counts match" : "COUNTS DIFFER");
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
