#!/usr/bin/env python3
"""Plot tw_bench_backends results and say where DESIGN.md section 5's GPU targets stand.

usage: python3 bench/plot_backends.py CSV [--out PNG]

Reads the CSV (lines starting with '#' are machine notes: gpu, cpu, copy
bandwidths, commands) and writes, beside it (CSV without .csv):
  STEM.png          one panel per method: steps/s vs tets, log-log, one line per
                    backend and CG mode, the bar's sizes joined, bunny / dog as
                    their own markers; a last panel: achieved solve GB/s vs
                    tets (fixed 20 CG iterations) beside each backend's
                    measured copy bandwidth (dashed)
  STEM_targets.txt  the targets (1M tets corot-element 20 CG iterations >= 300
                    steps/s; a CG iteration >= 60 % of the copy bandwidth at
                    >= 1M tets; 100k tets >= 2000 steps/s; GPU >= 20x CPU at
                    1M tets), each with the measured number or "not measured"
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BACKEND_STYLE = {"cuda": ("tab:green", "o"), "cuda-nograph": ("tab:olive", "v"), "cuda-ownspmv": ("tab:red", "^"),
                 "cuda-warpspmv": ("tab:purple", "<"), "cuda-fused": ("tab:cyan", ">"),
                 "cuda-allfused": ("tab:pink", "P"), "cuda-mg": ("tab:brown", "*"), "cuda-mg-warp": ("tab:olive", "*"),
                 "cpu": ("tab:blue", "s")}
CG_STYLE = {"fixed20": "-", "tol1e-4": "--"}
SCENE_MARKER = {"bar": None, "bunny": "^", "dog": "D"}


def read(path):
    notes, lines = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                notes.append(line[1:].strip())
            elif line.strip():
                lines.append(line)
    header = [i for i, l in enumerate(lines) if l.startswith("scene,")]
    if not header:
        sys.exit(f"plot_backends.py: no header row in {path}")
    rows = [r for r in csv.DictReader(lines[header[0]:]) if r.get("scene") != "scene"]
    return rows, notes


def note(notes, key):
    for n in notes:
        if n.startswith(key + ":"):
            return n.split(":", 1)[1].strip()
    return None


def ok_rows(rows):
    return [r for r in rows if r.get("ok") == "1"]


def f(r, key):
    try:
        return float(r[key])
    except (KeyError, ValueError):
        return math.nan


def pick(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def targets(rows):
    out = []
    ok = ok_rows(rows)
    gpu = [r for r in ok if r["backend"] == "cuda"]

    def one(scene, size, method, backend, cg="fixed20"):
        s = pick(ok, scene=scene, size=size, method=method, backend=backend, cg_mode=cg)
        return s[0] if s else None

    r = one("bar", "1m", "corot-element", "cuda")
    out.append("1M tets (bar), corot-element, 20 CG iterations, >= 300 steps/s: " +
               (f"{f(r, 'steps_per_s'):.0f} steps/s ({f(r, 'tets'):.0f} tets) -> "
                f"{'MET' if f(r, 'steps_per_s') >= 300 else 'NOT MET'}" if r else "not measured"))
    big = [x for x in gpu if f(x, "tets") >= 1e6 and x["cg_mode"] == "fixed20"]
    if big:
        pcts = sorted((f(x, "pct_copy"), x["scene"], x["size"], x["method"]) for x in big)
        lo, hi = pcts[0], pcts[-1]
        met = sum(1 for p in pcts if p[0] >= 60)
        out.append(f"CG at >= 60 % of the copy bandwidth, >= 1M tets (20 iterations, the solve phase as a whole): "
                   f"{lo[0]:.0f} % ({lo[1]} {lo[2]} {lo[3]}) to {hi[0]:.0f} % ({hi[1]} {hi[2]} {hi[3]}); "
                   f"{met} of {len(pcts)} rows MET")
    else:
        out.append("CG at >= 60 % of the copy bandwidth, >= 1M tets: not measured")
    r = one("bar", "100k", "corot-element", "cuda")
    line = "100k tets (bar), corot-element, 20 CG iterations, >= 2000 steps/s: "
    if r:
        line += f"{f(r, 'steps_per_s'):.0f} steps/s -> {'MET' if f(r, 'steps_per_s') >= 2000 else 'NOT MET'}"
        others = pick(ok, scene="bar", size="100k", backend="cuda", cg_mode="fixed20")
        line += "; all methods: " + ", ".join(f"{x['method']} {f(x, 'steps_per_s'):.0f}" for x in others)
    else:
        line += "not measured"
    out.append(line)
    g, c = one("bar", "1m", "corot-element", "cuda"), one("bar", "1m", "corot-element", "cpu")
    line = "GPU >= 20x the CPU backend (all host threads) at 1M tets (bar, corot-element, 20 CG iterations): "
    if g and c:
        ratio = f(g, "steps_per_s") / f(c, "steps_per_s")
        line += (f"{ratio:.1f}x ({f(g, 'steps_per_s'):.0f} vs {f(c, 'steps_per_s'):.1f} steps/s, CPU {c['threads']} "
                 f"threads{', capped' if c.get('capped') == '1' else ''}) -> {'MET' if ratio >= 20 else 'NOT MET'}")
    else:
        line += "not measured"
    out.append(line)
    ng = [x for x in ok if x["backend"] == "cuda-nograph" and x["cg_mode"] == "fixed20"]
    if ng:
        pairs = []
        for x in ng:
            y = one(x["scene"], x["size"], x["method"], "cuda")
            if y:
                pairs.append(f"{x['scene']} {x['size']} {x['method']} {f(y, 'steps_per_s') / f(x, 'steps_per_s'):.2f}x")
        out.append("CUDA Graph vs host-driven step (steps/s ratio, 20 iterations): " + "; ".join(pairs))
    out.extend(spmv_lines(ok, one))
    out.extend(variant_lines(ok, one))
    out.append(mg_line(one))
    return out


def mg_line(one):
    """Issue 13's GPU target: 1M tets to tolerance 1e-4 at >= 150 steps/s (cuda-mg: the device's multigrid)."""
    r = one("bar", "1m", "corot-element", "cuda-mg", "tol")
    line = "1M tets (bar), corot-element, PCG to tolerance with the device multigrid (cuda-mg), >= 150 steps/s: "
    if not r:
        return line + "not measured"
    line += (f"{f(r, 'steps_per_s'):.0f} steps/s, {f(r, 'cg_iterations'):.1f} CG iterations per step -> "
             f"{'MET' if f(r, 'steps_per_s') >= 150 else 'NOT MET'}")
    w = one("bar", "1m", "corot-element", "cuda-mg-warp", "tol")
    if w:
        line += f"; with the finest sweeps by lanes (cuda-mg-warp) {f(w, 'steps_per_s'):.0f} steps/s"
    j, c = one("bar", "1m", "corot-element", "cuda", "tol"), one("bar", "1m", "corot-element", "cpu", "tol")
    if j:
        line += f"; block-Jacobi on the device {f(j, 'steps_per_s'):.0f} steps/s, {f(j, 'cg_iterations'):.1f} iterations"
    if c:
        line += f"; cpu (multigrid) {f(c, 'steps_per_s'):.1f} steps/s, {f(c, 'cg_iterations'):.1f} iterations"
    return line


# the targets for the bar, corot-element, 20 CG iterations (steps/s by size) and the CG's share of the copy bandwidth
STEP_TARGETS = {"1m": 1000, "100k": 5000, "10k": 8000}
COPY_TARGET = 80


def variant_lines(ok, one):
    """The warp-cooperative SpMV (cuda-warpspmv), the fused PCG (cuda-fused) and
    that with the fused element kernel (cuda-allfused) beside cuda (cuSPARSE) and cuda-ownspmv of the same run: steps/s, ms of the
    solve phase per CG iteration and its share of the copy bandwidth (each
    row's own byte model: the fused one moves less), and the steps/s targets."""
    rows = [x for x in ok if x["backend"] in ("cuda-warpspmv", "cuda-fused", "cuda-allfused")]
    if not rows:
        return ["warp SpMV / fused PCG / fused elements: not measured (no cuda-warpspmv, cuda-fused or cuda-allfused rows)"]
    out = ["warp SpMV (cuda-warpspmv), fused PCG (cuda-fused), and with the fused element kernel (cuda-allfused) vs "
           "cuSPARSE (cuda) and hand-written (cuda-ownspmv), "
           "same scene/size/method/CG mode: steps/s, ms per CG iteration, % of copy bandwidth:"]
    for x in sorted(rows, key=lambda r: (r["scene"], f(r, "tets"), r["method"], r["cg_mode"], r["backend"])):
        parts = []
        for b in ("cuda", "cuda-ownspmv"):
            y = one(x["scene"], x["size"], x["method"], b, x["cg_mode"])
            if y:
                parts.append(f"{b} {f(y, 'steps_per_s'):.0f} ({ms_per_iteration(y):.4f} ms, {f(y, 'pct_copy'):.0f} %)")
        out.append(f"  {x['scene']} {x['size']} {x['method']} {x['cg_mode']}: {x['backend']} {f(x, 'steps_per_s'):.0f} "
                   f"steps/s ({ms_per_iteration(x):.4f} ms, {f(x, 'pct_copy'):.0f} %)"
                   + ("; " + ", ".join(parts) if parts else ""))
    for size, goal in STEP_TARGETS.items():
        best = [(f(y, "steps_per_s"), y["backend"]) for y in ok if y["scene"] == "bar" and y["size"] == size
                and y["method"] == "corot-element" and y["cg_mode"] == "fixed20" and y["backend"] != "cpu"]
        if best:
            v, b = max(best)
            out.append(f"  target bar {size} corot-element fixed20 >= {goal} steps/s: best {v:.0f} ({b}) -> "
                       f"{'MET' if v >= goal else 'NOT MET'}")
    big = [(f(y, "pct_copy"), y["backend"], y["scene"], y["size"], y["method"]) for y in ok
           if y["backend"] != "cpu" and f(y, "tets") >= 1e6 and y["cg_mode"] == "fixed20"]
    if big:
        v = max(big)
        out.append(f"  target CG >= {COPY_TARGET} % of the copy bandwidth at >= 1M tets: best {v[0]:.0f} % "
                   f"({v[1]}, {v[2]} {v[3]} {v[4]}) -> {'MET' if v[0] >= COPY_TARGET else 'NOT MET'}")
    return out


def ms_per_iteration(r):
    it = f(r, "cg_iterations")
    return f(r, "ms_solve") / it if it > 0 else math.nan


def spmv_lines(ok, one):
    """The hand-written 3x3-BSR SpMV (cuda-ownspmv, TW_CUDA_SPMV=own) beside
    cuSPARSE's (cuda), ms of the solve phase per CG iteration, same scene/size/method/CG mode."""
    own = [x for x in ok if x["backend"] == "cuda-ownspmv"]
    if not own:
        return ["SpMV, hand-written vs cuSPARSE (ms per CG iteration): not measured (no cuda-ownspmv rows)"]
    out = ["SpMV, ms of the solve phase per CG iteration, cuSPARSE (cuda) vs hand-written (cuda-ownspmv); "
           "ratio > 1: the hand-written one is faster:"]
    wins = big_wins = big = 0
    for x in sorted(own, key=lambda r: (r["scene"], f(r, "tets"), r["method"], r["cg_mode"])):
        y = one(x["scene"], x["size"], x["method"], "cuda", x["cg_mode"])
        if not y:
            continue
        a, b = ms_per_iteration(y), ms_per_iteration(x)
        ratio = a / b if b > 0 else math.nan
        wins += ratio > 1
        if f(x, "tets") >= 1e6:
            big += 1
            big_wins += ratio > 1
        out.append(f"  {x['scene']} {x['size']} {x['method']} {x['cg_mode']}: cuSPARSE {a:.4f} ms, own {b:.4f} ms "
                   f"-> {ratio:.2f}x; steps/s {f(y, 'steps_per_s'):.0f} vs {f(x, 'steps_per_s'):.0f}")
    pairs = len(out) - 1
    out.append(f"  hand-written faster in {wins} of {pairs} pairs ({big_wins} of {big} at >= 1M tets): "
               + ("keep both selectable (TW_CUDA_SPMV=own)" if wins else "cuSPARSE stays the default"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--out", help="PNG path (default: beside the CSV)")
    a = ap.parse_args()
    rows, notes = read(a.csv)
    ok = ok_rows(rows)
    if not ok:
        sys.exit(f"plot_backends.py: no successful rows in {a.csv}")
    stem = a.csv[:-4] if a.csv.endswith(".csv") else a.csv
    png = a.out or stem + ".png"
    methods = list(dict.fromkeys(r["method"] for r in ok))
    panels = len(methods) + 1
    cols = min(4, panels)
    nrows = math.ceil(panels / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.6 * nrows), squeeze=False)
    axes = [ax for row in axes for ax in row]
    for ax, method in zip(axes, methods):
        for backend in dict.fromkeys(r["backend"] for r in ok):
            color, marker = BACKEND_STYLE.get(backend, ("black", "x"))
            for cg, ls in CG_STYLE.items():
                sel = pick(ok, method=method, backend=backend, cg_mode=cg)
                bar = sorted((f(r, "tets"), f(r, "steps_per_s")) for r in sel if r["scene"] == "bar")
                if bar:
                    ax.plot([p[0] for p in bar], [p[1] for p in bar], ls, color=color, marker=marker, ms=4,
                            label=f"{backend} {cg}")
                for scene, m in SCENE_MARKER.items():
                    pts = [(f(r, "tets"), f(r, "steps_per_s")) for r in sel if r["scene"] == scene and m]
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, color=color, marker=m, ms=6,
                                fillstyle="none", label=f"{backend} {cg} {scene}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(method)
        ax.set_xlabel("tets")
        ax.set_ylabel("steps/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    ax = axes[len(methods)]
    copy = {"cuda": note(notes, "gpu_copy_gbps"), "cpu": note(notes, "cpu_copy_gbps")}
    for backend in dict.fromkeys(r["backend"] for r in ok):
        color, marker = BACKEND_STYLE.get(backend, ("black", "x"))
        for method in methods:
            pts = sorted((f(r, "tets"), f(r, "solve_gbps")) for r in pick(ok, method=method, backend=backend,
                                                                           cg_mode="fixed20"))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color, marker=marker, ms=3, alpha=0.6,
                        label=f"{backend} {method}")
        c = copy.get(backend.split("-")[0])
        if c:
            ax.axhline(float(c.split()[0]), color=color, ls="--", lw=1, label=f"{backend} copy {c.split()[0]} GB/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("solve GB/s (byte model), fixed 20 CG")
    ax.set_xlabel("tets")
    ax.set_ylabel("GB/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=5)
    for ax in axes[panels:]:
        ax.axis("off")
    gpu = note(notes, "gpu") or "none"
    gpu = "no GPU" if gpu.startswith("none") else gpu
    cpu = note(notes, "cpu") or "?"
    cores = note(notes, "cores") or "?"
    real = note(notes, "real") or "?"
    fig.suptitle(f"tetwarp backends: {gpu} | CPU {cpu}, {cores} threads | {real}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(png)
    t = targets(rows)
    text = "DESIGN.md section 5, CUDA targets (H100), from " + os.path.basename(a.csv) + f" ({gpu}):\n"
    text += "\n".join("- " + line for line in t) + "\n"
    with open(stem + "_targets.txt", "w") as fo:
        fo.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
