// The SPMD tutorial: MD5 of 500 files by a plain loop and by 100 engines.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "spmd_md5.hpp"
#include "tessera/spmd/spmd.hpp"

using namespace tessera::spmd;

namespace {

// A fresh folder under the system's temporary directory, removed at the end.
struct TempFolder {
  TempFolder() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-spmd-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

}  // namespace

TEST_CASE("md5 of 500 files on 100 engines equals the plain loop") {
  TempFolder folder;
  spmd_md5::make_random_files(folder.path, 500, 1024);
  std::vector<std::string> plain = spmd_md5::md5_sequential(folder.path.string());
  REQUIRE(plain.size() == 500);
  CHECK(spmd_md5::md5_file(folder.path / "file_00000.bin") != spmd_md5::md5_file(folder.path / "file_00001.bin"));

  Cluster cluster(100);
  auto view = cluster.broadcast_view();
  view.scatter("rank", cluster.ids(), /*flatten=*/true);
  auto ar = view.apply(spmd_md5::spmd_task, folder.path.string(), Reference("rank"), cluster.size());
  std::vector<std::vector<std::string>> parts = ar.get();
  REQUIRE(parts.size() == 100);
  CHECK(parts[0].size() == 5);
  CHECK(flatten(parts) == plain);
}

TEST_CASE("md5 of a known input") {
  TempFolder folder;
  std::ofstream(folder.path / "abc") << "abc";
  CHECK(spmd_md5::md5_file(folder.path / "abc") == "900150983cd24fb0d6963f7d28e17f72");  // RFC 1321
}

TEST_CASE("an engine that cannot read its files reports a StorageError") {
  Cluster cluster(2);
  auto ar = cluster.broadcast_view().apply(spmd_md5::md5_file, std::filesystem::path("/nonexistent/f"));
  REQUIRE_THROWS_WITH_AS(ar.get(),
                         "one or more exceptions raised in: apply\n"
                         "[0:apply] tessera::StorageError: /nonexistent/f: cannot open for reading: No such file "
                         "or directory\n"
                         "[1:apply] tessera::StorageError: /nonexistent/f: cannot open for reading: No such file "
                         "or directory",
                         CompositeError);
}
