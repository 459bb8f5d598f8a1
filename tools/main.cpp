// tessera — the command-line program: `tessera GROUP COMMAND ARGS...`.
// The groups are listed in kGroups; each lives in its own file (see command.hpp).
#include <array>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command.hpp"
#include "interrupt.hpp"

namespace {

using tessera::tool::CommandGroup;

// One line per group.
constexpr std::array kGroups = {
    &tessera::tool::graph_group,
    &tessera::tool::rechunk_group,
    &tessera::tool::info_group,
};

void print_help(std::FILE* out) {
  std::fprintf(out, "usage: tessera GROUP COMMAND [ARGS...]\n\ngroups:\n");
  for (auto group : kGroups) {
    const CommandGroup& g = group();
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(g.name.size()), g.name.data(),
                 static_cast<int>(g.summary.size()), g.summary.data());
  }
  std::fprintf(out, "\n`tessera GROUP --help` describes a group's commands.\n");
}

void print_usage(const CommandGroup& g, std::FILE* out) {
  std::fprintf(out, "%.*s", static_cast<int>(g.usage.size()), g.usage.data());
}

// `status` for an error, unless a signal interrupted the run: then 128 + its number.
int exit_status(int status) {
  const int interrupted = tessera::tool::interrupted_exit_status();
  return interrupted != 0 ? interrupted : status;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_help(stderr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help(stdout);
    return 0;
  }
  for (auto group : kGroups) {
    const CommandGroup& g = group();
    if (args[0] != g.name) continue;
    if (args.size() > 1 && (args[1] == "--help" || args[1] == "-h")) {
      print_usage(g, stdout);
      return 0;
    }
    try {
      return g.run({args.begin() + 1, args.end()});
    } catch (const tessera::tool::UsageError& e) {
      std::fprintf(stderr, "tessera %s: %s\n", std::string(g.name).c_str(), e.what());
      print_usage(g, stderr);
      return 2;
    } catch (const tessera::tool::InputError& e) {
      std::fprintf(stderr, "tessera: %s\n", e.what());
      return exit_status(2);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tessera: %s\n", e.what());
      return exit_status(1);
    }
  }
  std::fprintf(stderr, "tessera: unknown group '%s'\n", args[0].c_str());
  print_help(stderr);
  return 2;
}
