// tools/terminal.hpp — text from input files made safe to print on a terminal.
//
// Graph names, keys, zarr dimension and member names, codec names: whatever a
// command prints from a file may come from a file the user did not make. A
// control character there is an instruction to the terminal (ESC starts the
// sequences that retitle it, clear it or rewrite what was printed before), so
// every such text goes through printable() on its way out: controls are written
// as Python's repr writes them, the rest (valid UTF-8 included) as it is.
//
// @code
//   std::printf("%s (%s)\n", printable(f.name).c_str(), path.c_str());
//   // a name "\x1b]0;owned\x07" prints as \x1b]0;owned\x07, not as a new title
// @endcode
#pragma once

#include <string>
#include <string_view>

namespace tessera::tool {

//! `text` with each C0 control, DEL and C1 control written as an escape (`\x1b`,
//! `\x0a`, `\u009b`), and each byte that is not part of valid UTF-8 as `\xNN`;
//! with `keep_line_breaks`, '\n' stays (a message of several lines).
std::string printable(std::string_view text, bool keep_line_breaks = false);

}  // namespace tessera::tool
