#!/usr/bin/env bash
# `mpirun -np 3 dlsim sweep FILE --mpi` writes the runs.csv and summary.md of a single-process sweep, byte for
# byte, and resumes over MPI as well. Usage: mpi.sh MPIRUN DLSIM SWEEP.yaml
set -euo pipefail
mpirun=$1
dlsim=$2
sweep=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=$(sed -n 's/^name: *//p' "$sweep")

"$dlsim" sweep "$sweep" --jobs 1 --results-dir "$work/single" >/dev/null
"$mpirun" --oversubscribe -np 3 "$dlsim" sweep "$sweep" --mpi --results-dir "$work/mpi" >"$work/mpi.log"
grep -q "^MPI: 3 ranks" "$work/mpi.log"
cmp "$work/single/$name/runs.csv" "$work/mpi/$name/runs.csv"
cmp "$work/single/$name/summary.md" "$work/mpi/$name/summary.md"
echo "3 ranks: runs.csv and summary.md identical to one process"

# Half the rows gone: --resume over MPI runs the rest and ends with the same file.
csv="$work/mpi/$name/runs.csv"
total=$(($(wc -l <"$csv") - 1))
head -n $((total / 2 + 1)) "$csv" >"$csv.half"
mv "$csv.half" "$csv"
"$mpirun" --oversubscribe -np 3 "$dlsim" sweep "$sweep" --mpi --resume --results-dir "$work/mpi" >"$work/resume.log"
grep -q "resuming .*: $((total / 2)) of $total points done" "$work/resume.log"
cmp "$work/single/$name/runs.csv" "$csv"
echo "3 ranks, resumed: identical"
