// tools/command.hpp — how the `tessera` program is put together.
//
// main.cpp holds a table of command groups (`tessera graph ...`, ...); each group
// lives in its own file and exposes one CommandGroup, whose `define` declares the
// group's commands and options on a CLI11 app (tools/cli.hpp). CLI11 writes every
// `--help` and every message about unknown options and bad values from those
// declarations, so a usage text cannot drift from the code. Adding a group: write
// tools/<name>_command.cpp defining `const CommandGroup& <name>_group()`, declare
// it below, add it to the table in main.cpp and to tools/meson.build. Adding an
// option: one `add_option` / `add_flag` line in the command's `define`.
//
// Exit status: 0 done, 1 the work itself failed (a task raised), 2 bad usage or
// an unreadable input. CLI11's parse errors are bad usage; a command reports the
// others by throwing UsageError or InputError; main prints them.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace CLI {
class App;
}  // namespace CLI

namespace tessera::tool {

//! What the parsed command does; returns the exit status.
using Action = std::function<int()>;

//! A `tessera` command group: `tessera NAME ARGS...`.
struct CommandGroup {
  std::string_view name;     //!< the word after `tessera`
  std::string_view summary;  //!< one line for `tessera --help`
  //! Declares the group's commands and options on `app` (the group's own
  //! subcommand); parsing stores the chosen command's work in `action`.
  void (*define)(CLI::App& app, Action& action);
};

//! Bad usage found after parsing: main prints the message and the command's help; exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//! An input that cannot be used; main prints `tessera: FILE: problem`; exit status 2.
class InputError : public std::runtime_error {
 public:
  //! `problem` may already start with the file's name (tessera's loaders do that).
  InputError(const std::string& file, const std::string& problem)
      : std::runtime_error(problem.rfind(file, 0) == 0 ? problem : file + ": " + problem) {}
};

const CommandGroup& graph_group();
const CommandGroup& rechunk_group();
const CommandGroup& info_group();
//! `tessera info --cpu` (info_cpu.cpp).
int print_cpu();

}  // namespace tessera::tool
