// tessera — the command-line program: `tessera GROUP [COMMAND] ARGS...`.
// The groups are listed in kGroups; each lives in its own file and declares its
// commands and options with CLI11 (command.hpp, cli.hpp), which parses the line,
// writes every --help and the messages about unknown options and bad values.
#include <array>
#include <cstdio>
#include <exception>
#include <string>

#include "cli.hpp"
#include "command.hpp"
#include "interrupt.hpp"
#include "terminal.hpp"

namespace {

using tessera::tool::CommandGroup;

// One line per group.
constexpr std::array kGroups = {
    &tessera::tool::graph_group,
    &tessera::tool::rechunk_group,
    &tessera::tool::info_group,
};

// The deepest command the line chose (`tessera graph run`), or `tessera` before any.
const CLI::App& chosen(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

// Bad usage: the message, the chosen command's usage line and where its help is; exit status 2.
int usage_error(const CLI::App& app, const std::string& message) {
  const CLI::App& command = chosen(app);
  std::string name = command.get_name();
  for (const CLI::App* at = command.get_parent(); at != nullptr; at = at->get_parent())
    name = at->get_name() + " " + name;
  std::fprintf(stderr, "%s: %s\n%sRun '%s --help' for more.\n", name.c_str(),
               tessera::tool::printable(message, true).c_str(), CLI::Formatter().make_usage(&command, name).c_str(),
               name.c_str());
  return 2;
}

// `status` for an error, unless a signal interrupted the run: then 128 + its number.
int exit_status(int status) {
  const int interrupted = tessera::tool::interrupted_exit_status();
  return interrupted != 0 ? interrupted : status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("tessera: dask-style task graphs and chunked arrays on one machine.", "tessera");
  app.require_subcommand(0, 1);
  app.get_formatter()->column_width(26);
  tessera::tool::Action action;
  CLI::App& help = tessera::tool::add_command(app, action, "help", "this text", [&] {
    std::fputs(app.get_formatter()->make_help(&app, "tessera", CLI::AppFormatMode::Normal).c_str(), stdout);
    return 0;
  });
  help.group("");  // not listed; `tessera --help` says the same
  for (auto group : kGroups) {
    const CommandGroup& g = group();
    g.define(*app.add_subcommand(std::string(g.name), std::string(g.summary)), action);
  }
  app.footer("`tessera GROUP --help` describes a group's commands and options.");  // after the groups: theirs differ
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what());
  }
  if (!action) {  // a group of commands, and none was named
    std::string names;
    for (const CLI::App* c : chosen(app).get_subcommands({})) {
      if (!c->get_group().empty()) names += (names.empty() ? "" : ", ") + c->get_name();
    }
    return usage_error(app, "expected a command (" + names + ")");
  }
  try {
    return action();
  } catch (const tessera::tool::UsageError& e) {
    return usage_error(app, e.what());
  } catch (const tessera::tool::InputError& e) {
    std::fprintf(stderr, "tessera: %s\n", tessera::tool::printable(e.what(), true).c_str());
    return exit_status(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: %s\n", tessera::tool::printable(e.what(), true).c_str());
    return exit_status(1);
  }
}
