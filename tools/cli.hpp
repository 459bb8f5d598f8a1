// tools/cli.hpp — the pieces every command of `tessera` declares itself with (CLI11).
//
// A command is a CLI11 app whose options bind to the fields of an options struct
// the command's action owns, so adding an option is one line:
//
// @code
//   auto o = std::make_shared<RunOptions>();
//   CLI::App& c = add_command(group, action, "run", "runs the file's tasks", [o] { return run(*o); });
//   c.add_option("--workers", o->workers, "threads (0: the hardware's)")->check(CLI::Range(0, 1024));
//   c.add_option("--memory-limit", o->limit, "bytes held at most, e.g. 512MiB")->check(size_check());
// @endcode
//
// size_check() and chunks_check() give tessera's own messages for sizes (`1GiB`)
// and `--chunks` values; CLI11 puts the option's name in front.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "tessera/diagnostics/report.hpp"

namespace tessera::tool {

//! Adds command `name` under `parent`; when the command line chooses it, `run` becomes `action`.
CLI::App& add_command(CLI::App& parent, Action& action, const std::string& name, const std::string& summary,
                      Action run);

//! Makes `run` the action when the command line chooses `app` (a group that is itself the command).
void set_action(CLI::App& app, Action& action, Action run);

//! The words that chose `command` and its options as parsed (`tessera rechunk a.npy b.zarr --chunks 5,5`),
//! in the order first given: the command line a report shows.
std::vector<std::string> command_line(const CLI::App& command);

//! A positive size in bytes (`4096`, `512MiB`, `1GB`), checked with tessera::array::parse_bytes.
CLI::Validator size_check();

//! A `--chunks` value (chunk_spec.hpp): per axis a block size, -1, auto or keep.
CLI::Validator chunks_check();

//! InputError unless a `--report` at `path` could be written now: checked before
//! the run, so that a run is not done (nor its output published) for nothing.
void check_report_path(const std::string& path);

//! Writes `report` to `path`. A failure now (the disk filled during the run)
//! is a warning on stderr from `command`, not an error: the run's own outcome,
//! a success or its error, is what the command reports. False when it failed.
bool write_report(const diagnostics::Report& report, const std::string& path, const char* command);

}  // namespace tessera::tool
