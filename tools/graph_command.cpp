#include "command.hpp"
namespace tessera::tool {
namespace { int run_graph(std::vector<std::string> args) { Args a(std::move(args)); a.positional("COMMAND"); a.done(); return 0; } }
const CommandGroup& graph_group() { static const CommandGroup g{"graph", "x", "usage: inspect dot run\n", run_graph}; return g; }
}
