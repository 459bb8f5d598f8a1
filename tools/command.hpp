// tools/command.hpp — how the `tessera` program is put together.
//
// main.cpp holds a table of command groups (`tessera graph ...`, ...); each group
// lives in its own file and exposes one CommandGroup. Adding a group: write
// tools/<name>_command.cpp defining `const CommandGroup& <name>_group()`, declare
// it below, add it to the table in main.cpp and to tools/meson.build.
//
// Exit status: 0 done, 1 the work itself failed (a task raised), 2 bad usage or
// an unreadable input. A command reports those by throwing UsageError or
// InputError; main prints them.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::tool {

//! A `tessera` command group: `tessera NAME ARGS...`.
struct CommandGroup {
  std::string_view name;     //!< the word after `tessera`
  std::string_view summary;  //!< one line for `tessera --help`
  std::string_view usage;    //!< printed on a UsageError
  //! Runs with the arguments after NAME; returns the exit status.
  int (*run)(std::vector<std::string> args);
};

//! Bad usage: main prints the message and the group's usage; exit status 2.
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

//! A command's arguments, consumed as they are parsed.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  //! True when `--name` is present (and removes it).
  bool flag(std::string_view name);
  //! The value of `--name VALUE` or `--name=VALUE`, if present.
  std::optional<std::string> option(std::string_view name);
  //! An integer option in [min, max]; `fallback` when absent.
  long int_option(std::string_view name, long fallback, long min, long max);
  //! The next positional argument; UsageError naming `what` when there is none.
  std::string positional(std::string_view what);
  //! UsageError when anything is left unparsed.
  void done() const;

 private:
  std::vector<std::string> args_;
};

const CommandGroup& graph_group();
const CommandGroup& rechunk_group();
const CommandGroup& info_group();

}  // namespace tessera::tool
