// tessera — the command-line program.
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tessera COMMAND ...\n");
    return 2;
  }
  std::fprintf(stderr, "tessera: unknown command '%s'\n", argv[1]);
  return 2;
}
