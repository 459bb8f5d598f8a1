// Byte counts for people, as the `tessera` command prints them.
#pragma once

#include <string>

namespace tessera::tool {

//! `bytes` in the largest binary unit that keeps it at least 1: "512 B", "1.5 MiB".
std::string human(double bytes);

}  // namespace tessera::tool
