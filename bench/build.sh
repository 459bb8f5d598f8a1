# Sourced by bench/*/run.sh: bench_build [DIR] makes DIR (default build) a configured
# build folder with bench/ in it. scripts/test configures build without bench/ (CI needs
# none of it), so a folder that exists may still lack the bench targets.
bench_build() {
  local dir=${1:-build}
  if [ ! -d "$dir/meson-private" ]; then
    meson setup "$dir" -Dbench=true >/dev/null
  elif ! meson introspect "$dir" --buildoptions | grep -q '"name": "bench", "value": true'; then
    meson configure "$dir" -Dbench=true >/dev/null
  fi
}
