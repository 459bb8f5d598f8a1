// The demo's command line (main.cpp lists the options and what they do).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

namespace demo {

struct Settings {
  int64_t size = int64_t{4} << 30;
  int64_t max_mem = int64_t{512} << 20;
  int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string dir;
  bool keep = false;
  std::string input;  // an image.zarr a previous run kept; empty: generate one
  std::string codec = "blosc:lz4:5:shuffle";
  std::string report;    // an HTML report of the three runs; empty: none
  bool dry_run = false;  // print the plan across `ranks` ranks, compute nothing
  int ranks = 1;         // of --dry-run
  bool workers_given = false;
};

//! Reads the command line; prints the usage and exits with status 2 when it is bad.
Settings parse(int argc, char** argv);

}  // namespace demo
