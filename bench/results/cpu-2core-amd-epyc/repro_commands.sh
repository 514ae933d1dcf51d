#!/bin/sh
# Exact commands that produced the repro_* files in this folder (run from the
# repository root). bench/repro_papers.sh holds the individual program calls.
set -x
cmake -S . -B build-repro -DTW_CUDA=OFF && cmake --build build-repro -j2
bench/repro_papers.sh build-repro bench/results/cpu-2core-amd-epyc
