"""Writes the MD5 tutorial's input: 500 files of 1 KiB of random bytes into FOLDER.

usage: md5_files.py FOLDER   (bench/spmd/run.sh, bench/mpi/run.sh)
"""
import os
import sys

for i in range(500):
    with open(os.path.join(sys.argv[1], f"file_{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(1024))
