// The SPMD tutorial in C++: the MD5 of every file of a folder, computed by a
// plain loop and by one apply on a local cluster, where each engine hashes its
// own partition of the files.
//
//   spmd_md5 [engines=100] [files=500]
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "spmd_md5.hpp"
#include "tessera/spmd/spmd.hpp"

namespace spmd = tessera::spmd;

int main(int argc, char** argv) {
  int engines = argc > 1 ? std::atoi(argv[1]) : 100;
  int files = argc > 2 ? std::atoi(argv[2]) : 500;

  std::string folder = (std::filesystem::temp_directory_path() / "tessera-md5-XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  spmd_md5::make_random_files(folder, files, 1024);

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> plain = spmd_md5::md5_sequential(folder);
  auto t1 = std::chrono::steady_clock::now();

  spmd::Cluster cluster(engines);
  auto view = cluster.broadcast_view();
  view.scatter("rank", cluster.ids(), /*flatten=*/true);  // engine i: rank = i
  auto result = view.apply(spmd_md5::spmd_task, folder, spmd::Reference("rank"), cluster.size());
  std::vector<std::string> parallel = spmd::flatten(result.get());

  std::filesystem::remove_all(folder);
  std::printf("%d files, %d engines\n", files, engines);
  std::printf("plain loop: %.2f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
  std::printf("apply:      %.2f ms\n", std::chrono::duration<double, std::milli>(result.elapsed()).count());
  std::printf("first file: %s\n", plain.empty() ? "-" : plain.front().c_str());
  if (parallel != plain) {
    std::printf("MISMATCH: the engines' digests differ from the plain loop's\n");
    return 1;
  }
  std::printf("the flattened parallel result equals the plain one\n");
  return 0;
}
