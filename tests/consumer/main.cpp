// An outside program using an installed tessera: the README's C++ example and more, built by
// tests/consumer/run.sh through pkg-config (meson.build) and through CMake
// (CMakeLists.txt), without -rdynamic. Exits non-zero when a result is wrong.
#include <tessera/tessera.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

int inc(int x) { return x + 1; }
int add(int a, int b) { return a + b; }
int add_positive(int a, int b) {
  if (b < 0) throw std::invalid_argument("b is negative");
  return a + b;
}

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "consumer: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main() {
  tessera::Graph g;
  g.put("x", 1);
  g.put("y", 2);
  g.task("z", inc, tessera::ref("x"));
  g.task("w", add, tessera::ref("z"), tessera::ref("y"));
  const int w = tessera::get(g, "w").as<int>();
  std::printf("%d\n", w);
  if (w != 4) return fail("w is " + std::to_string(w) + ", expected 4");

  tessera::Result r = tessera::get_sync(g, {"z", "w"});
  if (r.size() != 2 || r[0].as<int>() != 2 || r[1].as<int>() != 4) return fail("get_sync did not give {2, 4}");

  // This program is linked without -rdynamic, so only a name given with the
  // function reaches the message.
  g.task("bad", TESSERA_FN(add_positive), tessera::ref("x"), -1);
  try {
    tessera::get(g, "bad");
    return fail("task bad did not throw");
  } catch (const tessera::TaskError& e) {
    const std::string message = e.what();
    std::printf("%s\n", message.c_str());
    if (message.find("(add_positive)") == std::string::npos) return fail("the message does not name add_positive");
  }
  return 0;
}
