#!/bin/sh
# bench/mpi/run.sh - MPI numbers for bench/mpi/results.md: the digits MLP's epoch time on 1
# and 2 ranks (examples/train_digits_dist.tsl, mean of 20 epochs, no per-step check), and
# allreduce bandwidth for 1 to 64 MB, TSL's against the MPI library's own loop in C.
# Usage: sh bench/mpi/run.sh [bin/tsl]   (as root it passes --allow-run-as-root)
set -e
TSL=${1:-bin/tsl}
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
epoch_ms() { awk 'NR > 2 { s += $5; n++ } END { printf "%.2f", s / n }'; }
echo "## digits MLP, 20 epochs (examples/train_digits_dist.tsl): mean epoch time"
echo
echo "| ranks | epoch ms | final test accuracy |"
echo "|---|---|---|"
for np in 1 2; do
    $MPIRUN -np $np $TSL examples/train_digits_dist.tsl 20 >"$tmp/out"
    echo "| $np | $(epoch_ms <"$tmp/out") | $(tail -1 "$tmp/out" | awk '{print $4}') |"
done
echo
mpicc -O2 -o "$tmp/osu" bench/mpi/osu_allreduce.c
for np in 2; do
    $MPIRUN -np $np $TSL bench/mpi/allreduce.tsl 10 >"$tmp/tsl"
    $MPIRUN -np $np "$tmp/osu" 10 >"$tmp/c"
    echo "## allreduce of f32, $np ranks (median of 10 calls; MB/s = size / time)"
    echo
    echo "| MB | TSL allreduce ms | TSL MB/s | MPI_Allreduce ms | MPI_Allreduce MB/s | MPI_Allgather ms | MPI_Allgather MB/s |"
    echo "|---|---|---|---|---|---|---|"
    paste -d' ' "$tmp/tsl" "$tmp/c" | awk '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $5, $6, $7, $8 }'
    echo
done
