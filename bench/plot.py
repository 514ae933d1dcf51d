#!/usr/bin/env python3
"""Plot steps/s vs tets (log-log), one line per method, all threads, fixed-20 CG.

usage: python3 bench/plot.py bench/results/<machine> [--threads N] [--cg fixed20|tol1e-4] [--prefix P]

Reads every bench_cpu*.csv (or PREFIX*.csv) in the folder (lines starting with '#' are machine
notes) and writes steps_per_s.png there. "All threads" is the largest thread
count found in the CSVs unless --threads is given.
"""
import argparse
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(folder, prefix):
    rows, notes = [], []
    for path in sorted(glob.glob(os.path.join(folder, prefix + "*.csv"))):
        with open(path) as f:
            lines = [l for l in f if not l.startswith("#") or notes.append(l[1:].strip())]
        rows += [r for r in csv.DictReader(lines) if r.get("ok") == "1"]
    return rows, notes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--cg", default="fixed20")
    ap.add_argument("--prefix", default="bench_cpu", help="read PREFIX*.csv, write steps_per_s[_PREFIX].png")
    a = ap.parse_args()
    rows, notes = read_rows(a.folder, a.prefix)
    if not rows:
        sys.exit(f"plot.py: no successful rows in {a.folder}/{a.prefix}*.csv")
    threads = a.threads or max(int(r["threads"]) for r in rows)
    sel = [r for r in rows if int(r["threads"]) == threads and r["cg_mode"] == a.cg]
    cpu = next((n.split(":", 1)[1].strip() for n in notes if n.startswith("cpu:")), "?")
    fig, ax = plt.subplots(figsize=(7, 5))
    for method in dict.fromkeys(r["method"] for r in sel):
        pts = sorted((int(r["tets"]), float(r["steps_per_s"])) for r in sel if r["method"] == method)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tets")
    ax.set_ylabel("steps/s")
    ax.set_title(f"tetwarp CPU, {cpu}, {threads} threads, CG {a.cg}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    tag = "" if a.prefix == "bench_cpu" else "_" + a.prefix
    out = os.path.join(a.folder, f"steps_per_s{tag}.png")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
