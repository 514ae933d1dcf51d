"""Plots bench/spmv_half.sh's CSV: time per SpMV (median) of the full and the
symmetric-half products per bar size and thread count, and the ratio to the
full product. Usage: plot_spmv_half.py spmv_half.csv out.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
sizes = list(dict.fromkeys(r["size"] for r in rows))
forms = list(dict.fromkeys(r["form"] for r in rows))
fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
width = 0.8 / (2 * len(forms))
for t, threads in enumerate(("1", "2")):
    for f, form in enumerate(forms):
        pick = {r["size"]: r for r in rows if r["form"] == form and r["threads"] == threads}
        xs = [k + (t * len(forms) + f) * width for k in range(len(sizes))]
        ax[0].bar(xs, [float(pick[s]["ms_median"]) if s in pick else 0 for s in sizes], width,
                  label=f"{form}, {threads} thr", hatch="//" if t else None)
        ax[1].bar(xs, [float(pick[s]["ratio_vs_full"]) if s in pick else 0 for s in sizes], width,
                  label=f"{form}, {threads} thr", hatch="//" if t else None)
for a in ax:
    a.set_xticks([k + 0.4 - width / 2 for k in range(len(sizes))])
    a.set_xticklabels([f"{s}\n({next(r['tets'] for r in rows if r['size'] == s)} tets)" for s in sizes])
ax[0].set_yscale("log")
ax[0].set_ylabel("ms per SpMV (median)")
ax[0].set_title("3x3-BSR SpMV, corot bar, float")
ax[1].axhline(1, color="k", lw=0.8)
ax[1].set_ylabel("time / full's time (same threads, same rounds)")
ax[1].set_title("symmetric half vs full")
ax[1].legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
