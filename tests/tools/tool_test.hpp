// tests/tools/tool_test.hpp — running the built `tessera` program from a test.
#pragma once

#include <string>

namespace tessera::tool_test {

//! What one run of the program gave.
struct Run {
  int status = -1;  //!< exit status
  std::string out, err;
};

//! Runs `tessera ARGS` (ARGS is shell text) with the program named by TESSERA_TOOL.
Run run_tessera(const std::string& args);
//! The path of a fixture in tests/tools/data.
std::string data(const std::string& name);
//! The text of a file.
std::string read_text(const std::string& path);

}  // namespace tessera::tool_test
