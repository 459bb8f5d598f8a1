// `tessera graph dot`: a graph file as Graphviz DOT, drawn so that it can be read.
#pragma once

#include <cstdio>
#include <string>

#include "tessera/graph_file/graph_file.hpp"

namespace tessera::tool {

//! What a node's fill colour shows.
enum class DotColor { order, memory };

//! Parses `--color`'s value: "order" or "memory"; UsageError otherwise.
DotColor parse_dot_color(const std::string& text);

//! Writes `f` as DOT to `out` (see graph_dot.cpp for the drawing's rules).
void write_dot(const GraphFile& f, DotColor color, std::FILE* out);

}  // namespace tessera::tool
