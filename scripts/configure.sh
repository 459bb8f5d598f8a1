# Sourced by scripts/test and scripts/build-asan: how their build folders are set up.

# Every build compiles each group of 8 library sources as one translation unit
# (Meson's unity build), and each suite as one (-Dunity_tests=true): the sources share
# the Eigen, oneTBB and nlohmann-json headers, and parsing them once a group instead
# of once a file takes a third off the library's compile time.
unity_opts=(-Dunity=on -Dunity_size=8 -Dunity_tests=true)

# The sanitizer builds (clang-15): -O1 without debug info compiles in half the time
# of -O2 -g (Eigen-heavy files dominate) and still names every frame. The Python
# module is left out: loaded into /usr/bin/python3 it would need the sanitizer's
# runtime preloaded; its suites run in the release build. _GLIBCXX_ASSERTIONS makes
# libstdc++ check indices and preconditions (v[i] past v.size() but within its
# capacity, front() of an empty vector, ...) that ASan cannot see; the ASan suites
# ran in the same time with it. -Db_ndebug=false keeps NDEBUG undefined (Meson
# defines it whenever debug=false), so that Eigen checks its own preconditions:
# coefficient indices, block and slice ranges, sizes that agree in an assignment
# (an out-of-range index inside a tensor's buffer is nothing ASan can see). The
# suites ran in the same time with it, and the fuzz harnesses check them too.
sanitize_opts=(-Dbuildtype=plain -Doptimization=1 -Ddebug=false -Db_ndebug=false -Db_lundef=false -Dbench=false
               -Dpython=disabled -Dcpp_args=-D_GLIBCXX_ASSERTIONS "${unity_opts[@]}")

# configure DIR [OPTION...]: meson setup DIR with the OPTIONs, or --reconfigure a
# folder set up before. Meson keeps the compiler of a folder's first setup, so a
# folder set up with another compiler than $CXX (when set) is set up anew (--wipe).
configure() {
  local dir=$1; shift
  if [ ! -d "$dir/meson-private" ]; then
    meson setup "$dir" "$@" >/dev/null
  elif [ -z "${CXX:-}" ] || grep -q "^ *command = $CXX " "$dir/build.ninja" 2>/dev/null; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup --wipe "$dir" "$@" >/dev/null
  fi
}
