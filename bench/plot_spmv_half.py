"""Plots bench/spmv_half.sh's CSV: (a) time per SpMV (median wall) of the full
and the symmetric-half products per bar size and thread count, (b) each
half form's time over the full product's (process CPU time, the steadier on
a shared machine; wall time as dots), (c) the PCG's ms_solve per step (20
iterations) with the full and the half product.
Usage: plot_spmv_half.py spmv_half.csv out.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
sizes = list(dict.fromkeys(r["size"] for r in rows))
spmv_forms = [f for f in dict.fromkeys(r["form"] for r in rows) if not f.startswith("pcg")]
pcg_forms = [f for f in dict.fromkeys(r["form"] for r in rows) if f.startswith("pcg")]
tets = {r["size"]: r["tets"] for r in rows}
labels = [f"{s}\n({tets[s]} tets)" for s in sizes]


def pick(form, threads):
    return {r["size"]: r for r in rows if r["form"] == form and r["threads"] == threads}


fig, ax = plt.subplots(1, 3, figsize=(15, 4.4))
colors = {"full": "tab:blue", "half": "tab:orange", "half-compact": "tab:green"}
w = 0.8 / (2 * len(spmv_forms))
for t, threads in enumerate(("1", "2")):
    for f, form in enumerate(spmv_forms):
        p = pick(form, threads)
        xs = [k + (t * len(spmv_forms) + f) * w for k in range(len(sizes))]
        ax[0].bar(xs, [float(p[s]["ms_median"]) if s in p else 0 for s in sizes], w, color=colors.get(form),
                  hatch="//" if t else None, label=f"{form}, {threads} thread{'s' if t else ''}")
        if form != "full":
            ax[1].bar(xs, [float(p[s]["cpu_ratio_vs_full"]) if s in p else 0 for s in sizes], w,
                      color=colors.get(form), hatch="//" if t else None,
                      label=f"{form}, {threads} thread{'s' if t else ''}")
            ax[1].plot(xs, [float(p[s]["ratio_vs_full"]) if s in p else 0 for s in sizes], "k.", ms=5)
for a in ax[:2]:
    a.set_xticks([k + 0.4 - w / 2 for k in range(len(sizes))])
    a.set_xticklabels(labels)
ax[0].set_yscale("log")
ax[0].set_ylabel("ms per SpMV (median wall)")
ax[0].set_title("3x3-BSR SpMV, corot bar, float")
ax[0].legend(fontsize=7)
ax[1].axhline(1, color="k", lw=0.8)
ax[1].set_ylabel("time / full's (CPU time bars, wall dots)")
ax[1].set_title("symmetric half vs full, same rounds")
ax[1].legend(fontsize=7)
w2 = 0.8 / max(1, len(pcg_forms))
for f, form in enumerate(pcg_forms):
    p = pick(form, "2")
    ax[2].bar([k + f * w2 for k in range(len(sizes))], [float(p[s]["ms_median"]) if s in p else 0 for s in sizes],
              w2, label=form, color="tab:blue" if form.endswith("full") else "tab:green")
ax[2].set_xticks([k + 0.4 - w2 / 2 for k in range(len(sizes))])
ax[2].set_xticklabels(labels)
ax[2].set_yscale("log")
ax[2].set_ylabel("ms_solve per step (median wall)")
ax[2].set_title("PCG, block-Jacobi, 20 iterations, 2 threads")
ax[2].legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
