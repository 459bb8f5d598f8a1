#!/bin/sh
# Runs lost_rank under mpirun --enable-recovery (Open MPI then keeps the job
# alive when one rank dies, so the client can report it); passes when the
# program printed "lost-rank: OK". The job ends by MPI_Abort, so mpirun's own
# status is not the verdict; the caller's timeout catches a hang.
mpirun="$1"
program="$2"
output=$("$mpirun" --enable-recovery -n 3 --oversubscribe "$program" 2>&1)
echo "$output"
echo "$output" | grep -q "^lost-rank: OK$"
