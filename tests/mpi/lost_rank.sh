#!/bin/sh
# Runs a lost-rank program under mpirun --enable-recovery (Open MPI then keeps
# the job alive when one rank dies, so the others can report it); passes when
# the program printed "PREFIX OK" lines, COUNT of them. The job ends by
# MPI_Abort, so mpirun's own status is not the verdict; the caller's timeout
# catches a hang.
#   lost_rank.sh MPIRUN PROGRAM [RANKS PREFIX COUNT]
mpirun="$1"
program="$2"
ranks="${3:-3}"
prefix="${4:-lost-rank:}"
count="${5:-1}"
output=$("$mpirun" --enable-recovery -n "$ranks" --oversubscribe "$program" 2>&1)
echo "$output"
test "$(echo "$output" | grep -c "^$prefix.* OK$")" -eq "$count"
