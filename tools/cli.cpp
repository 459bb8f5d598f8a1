#include "cli.hpp"

#include <algorithm>
#include <cstdio>

#include "chunk_spec.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/graph/error.hpp"
#include "terminal.hpp"

namespace tessera::tool {

CLI::App& add_command(CLI::App& parent, Action& action, const std::string& name, const std::string& summary,
                      Action run) {
  CLI::App* command = parent.add_subcommand(name, summary);
  set_action(*command, action, std::move(run));
  return *command;
}

void set_action(CLI::App& app, Action& action, Action run) {
  app.callback([&action, run = std::move(run)] { action = run; });
}

std::vector<std::string> command_line(const CLI::App& command) {
  std::vector<std::string> words;
  for (const CLI::App* at = &command; at != nullptr; at = at->get_parent()) words.insert(words.begin(), at->get_name());
  std::vector<const CLI::Option*> seen;
  for (const CLI::Option* option : command.parse_order()) {
    if (std::find(seen.begin(), seen.end(), option) != seen.end()) continue;
    seen.push_back(option);
    const std::vector<std::string>& values = option->results();
    if (option->get_positional()) {
      words.insert(words.end(), values.begin(), values.end());
    } else if (option->get_expected_min() == 0) {  // a flag
      words.push_back(option->get_name());
    } else {
      for (const std::string& value : values) words.insert(words.end(), {option->get_name(), value});
    }
  }
  return words;
}

CLI::Validator size_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)array::parse_bytes(text);  // refuses sizes below one byte
        } catch (const Error& e) {
          return e.what();
        }
        return "";
      },
      "SIZE");
}

CLI::Validator chunks_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)parse_chunks(text, "");  // CLI11 names the option
        } catch (const UsageError& e) {
          return e.what();
        }
        return "";
      },
      "C0,C1,...");
}

void check_report_path(const std::string& path) {
  try {
    diagnostics::Report::check_path(path);
  } catch (const StorageError& e) {
    throw InputError(path, std::string("--report: ") + e.what());
  }
}

bool write_report(const diagnostics::Report& report, const std::string& path, const char* command) {
  try {
    report.write_html(path);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: warning: the report was not written: %s\n", command, printable(e.what()).c_str());
    return false;
  }
}

}  // namespace tessera::tool
