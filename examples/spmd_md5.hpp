// examples/spmd_md5.hpp — the SPMD tutorial, shared by the example programs
// (spmd_md5.cpp on local engines, spmd_md5_mpi.cpp on MPI ranks), its test
// (tests/spmd/md5_test.cpp) and the benches.
//
// A folder of files; the MD5 of each (OpenSSL's EVP), computed by a plain loop
// and by an SPMD function in which each engine hashes its own partition of the
// sorted file list. The function is registered by name, so that engines in other
// processes (MPI ranks) find it too.
#pragma once

#include <openssl/evp.h>

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/spmd/partition.hpp"
#include "tessera/spmd/registry.hpp"
#include "tessera/spmd/view.hpp"

namespace spmd_md5 {

//! Writes `n` files of `bytes` random bytes each into `folder` (created if absent).
inline void make_random_files(const std::filesystem::path& folder, int n, size_t bytes, uint64_t seed = 42) {
  std::filesystem::create_directories(folder);
  std::mt19937_64 rng(seed);
  std::vector<char> buf(bytes);
  for (int i = 0; i < n; ++i) {
    for (char& c : buf) c = static_cast<char>(rng());
    char name[32];
    std::snprintf(name, sizeof name, "file_%05d.bin", i);
    std::ofstream out(folder / name, std::ios::binary);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (!out) throw tessera::StorageError((folder / name).string(), "cannot write", errno);
  }
}

//! The regular files of `folder`, sorted by name: every engine sees the same list.
inline std::vector<std::string> list_files(const std::filesystem::path& folder) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

//! The MD5 of a file's bytes, as 32 lowercase hex digits.
inline std::string md5_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tessera::StorageError(path.string(), "cannot open for reading", errno);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr) != 1) {
    throw tessera::Error("OpenSSL could not start an MD5 digest");
  }
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), buf.size());
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

//! The plain loop: the MD5 of every file of `folder`, in name order.
inline std::vector<std::string> md5_sequential(const std::string& folder) {
  std::vector<std::string> sums;
  for (const auto& f : list_files(folder)) sums.push_back(md5_file(f));
  return sums;
}

//! The SPMD function: engine `rank` of `size` hashes its partition of the files.
inline std::vector<std::string> spmd_task(const std::string& folder, int rank, int size) {
  std::vector<std::string> files = list_files(folder);
  auto [begin, end] = tessera::spmd::get_partition(static_cast<int64_t>(files.size()), rank, size);
  std::vector<std::string> sums;
  for (int64_t i = begin; i < end; ++i) sums.push_back(md5_file(files[static_cast<size_t>(i)]));
  return sums;
}

//! The tutorial on `cluster` (a tessera::spmd::Cluster or a tessera::mpi::Cluster):
//! writes `files` random files into a new folder under `parent` (a folder every
//! engine sees), hashes them with a plain loop and with one apply, prints both
//! and whether they agree; 0 when they do.
template <class Cluster>
int run_tutorial(Cluster& cluster, int files, const std::filesystem::path& parent) {
  namespace spmd = tessera::spmd;
  std::string folder = (parent / "tessera-md5-XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  make_random_files(folder, files, 1024);

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> plain = md5_sequential(folder);
  auto t1 = std::chrono::steady_clock::now();

  auto view = cluster.broadcast_view();
  view.scatter("rank", cluster.ids(), /*flatten=*/true);  // engine i: rank = i
  auto result = view.apply(spmd_task, folder, spmd::Reference("rank"), cluster.size());
  std::vector<std::string> parallel = spmd::flatten(result.get());

  std::filesystem::remove_all(folder);
  std::printf("%d files, %d engines\n", files, cluster.size());
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

}  // namespace spmd_md5

TESSERA_SPMD_REGISTER(spmd_md5::spmd_task);
