#!/usr/bin/env python3
"""Fails when two kernel sets (lib/array/kernels) define the same weak function.

Usage: isa_symbols.py LIB...   (the static libraries tessera_kernels_<isa>.a)

Each set's copy of kernels.cpp is compiled with its own -m flags. An inline
function it instantiates (Eigen's templates, a std:: helper) is a weak symbol,
and of several weak definitions of one name the linker keeps one for every
caller: an AVX-512 copy could then run on the baseline's path and fault on a
CPU without AVX-512. meson.build renames Eigen's namespace per set to prevent
it; this checks the objects, so that a new include cannot bring the danger back.
"""
import re
import subprocess
import sys

# std::min and std::max of an integer type: an unoptimized (-O0) build emits them
# out of line in every set. Their code compares integers in general-purpose
# registers, the same instructions under any -m flag, so sharing one is harmless.
SCALAR_INTEGER_HELPERS = re.compile(r"_ZSt3(min|max)I[acshtijlmxy]ERKT_S2_S2_")


def weak_symbols(lib):
    out = subprocess.run(["nm", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        # W: a weak function, the danger (its code carries the set's instructions).
        # Weak data (V, u: guard variables, typeinfo the sanitizers emit) holds no
        # instructions, and one copy serves every set alike.
        if len(parts) == 3 and parts[1] == "W" and not SCALAR_INTEGER_HELPERS.fullmatch(parts[2]):
            names.add(parts[2])
    return names


def main(libs):
    by_lib = {lib: weak_symbols(lib) for lib in libs}
    seen = {}
    bad = []
    for lib, names in by_lib.items():
        for name in names:
            if name in seen:
                bad.append(f"{name} (in {seen[name]} and {lib})")
            seen[name] = lib
    total = sum(len(n) for n in by_lib.values())
    if bad:
        print(f"{len(bad)} weak functions are defined by more than one kernel set:", *sorted(bad)[:20], sep="\n  ")
        return 1
    if len(libs) > 1 and total == 0:
        print("no weak function found at all: is this nm reading the kernel libraries?")
        return 1
    print(f"{total} weak functions in {len(libs)} kernel sets, none defined twice")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
