#!/usr/bin/env bash
# Installs tessera from a configured build folder into a temporary tree
# (meson install --destdir) and builds the program in this folder against it three
# ways: by hand with pkg-config's flags, with Meson's dependency('tessera')
# (meson.build), and with CMake's find_package (CMakeLists.txt).
# Each program runs and must print the README's answer. Also compiles and links a
# program that includes every installed public header with only tessera.pc's flags,
# and checks that none of them reaches Abseil, nlohmann_json, simdjson or oneTBB
# (libtessera's private dependencies).
#   tests/consumer/run.sh BUILD_DIR
set -euo pipefail
if [ $# -ne 1 ] || [ ! -d "$1/meson-private" ]; then
  echo "usage: $0 BUILD_DIR (a configured meson build folder of tessera)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

quietly() {  # runs a command, showing its output only when it fails
  "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; return 1; }
}

dest=$work/dest
quietly meson install -C "$build" --destdir "$dest"

pc=$(find "$dest" -name tessera.pc -path '*/pkgconfig/*')
config=$(find "$dest" -name tesseraConfig.cmake)
if [ -z "$pc" ] || [ -z "$config" ]; then
  echo "consumer: the install tree lacks tessera.pc or tesseraConfig.cmake" >&2
  exit 1
fi
prefix=$(sed -n 's/^prefix=//p' "$pc")
root=$dest$prefix
libdir=$(dirname "$(dirname "$pc")")

# The .pc names the final prefix; a copy points it into the destdir tree (only
# tessera's own prefix: the packages it requires stay where the system has them).
mkdir -p "$work/pkgconfig"
sed "s|^prefix=.*|prefix=$root|" "$pc" >"$work/pkgconfig/tessera.pc"
export PKG_CONFIG_PATH=$work/pkgconfig
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

check() {  # check NAME PROGRAM: runs it, wants 4 on the first line
  local out
  out=$("$2")
  echo "$out" | sed "s/^/  $1: /"
  if [ "$(echo "$out" | head -n1)" != 4 ]; then
    echo "consumer ($1): expected 4 on the first line" >&2
    exit 1
  fi
}

echo "== consumer: every public header with pkg-config's flags for tessera alone, compiled and linked"
# The flags are tessera.pc's and nothing else; they must name no private dependency
# (Abseil, nlohmann_json, simdjson, oneTBB), and no installed header may include one:
# Debian's /usr/include holds them, so the compiler's list of included files is the
# proof, not a failed build.
cflags=$(pkg-config --cflags tessera)
libs=$(pkg-config --libs tessera)
if echo "$cflags $libs" | grep -Eq 'absl|nlohmann|simdjson|tbb'; then
  echo "consumer: pkg-config --cflags --libs tessera names a private dependency: $cflags $libs" >&2
  exit 1
fi
{
  (cd "$root/include" && find tessera -name '*.hpp' | sort | sed 's/.*/#include <&>/')
  echo 'int main() { tessera::Graph g; g.put("x", 4); return tessera::get_sync(g, "x").as<int>() == 4 ? 0 : 1; }'
} >"$work/all_headers.cpp"
echo "+ c++ -std=c++20 $cflags all_headers.cpp -o all_headers $libs"
# shellcheck disable=SC2086
c++ -std=c++20 $cflags -M "$work/all_headers.cpp" >"$work/all_headers.d"
if grep -Eo '[^ ]*/(absl|nlohmann|simdjson|tbb|oneapi)/[^ ]*' "$work/all_headers.d" | head -n 5 | grep .; then
  echo "consumer: tessera's public headers include the private dependencies above" >&2
  exit 1
fi
# shellcheck disable=SC2086
c++ -std=c++20 $cflags "$work/all_headers.cpp" -o "$work/all_headers" $libs
"$work/all_headers"

echo "== consumer: c++ main.cpp \$(pkg-config --cflags --libs tessera)"
# shellcheck disable=SC2046
quietly c++ -std=c++20 -O1 "$here/main.cpp" -o "$work/consumer" $(pkg-config --cflags --libs tessera)
check pkg-config "$work/consumer"

echo "== consumer: meson, dependency('tessera') through pkg-config"
quietly meson setup "$work/meson" "$here" --buildtype=release
quietly ninja -C "$work/meson"
check meson "$work/meson/consumer"

echo "== consumer: cmake, find_package(tessera CONFIG)"
quietly cmake -S "$here" -B "$work/cmake" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$root"
quietly cmake --build "$work/cmake"
check cmake "$work/cmake/consumer"
