"""Summary and plot of bench/debunne_rate.sh: per run the frames/s, the ms a
frame on the clock and in CPU time (from the log), the frames over 10 ms on
the clock and in CPU time (the CSV's cpu_ms), the tet evaluations, the
tool force's update rate (from the log) and the largest probe and tool-force
differences from its set's first run (the runs named 10k* are one set, the
others another)."""
import csv
import re
import sys

d = sys.argv[1]
rows = {}
with open(f"{d}/debunne_rate.csv") as f:
    for r in csv.DictReader(f):
        rows.setdefault(r["run"], []).append(r)
tool = {}
cpu = {}
name = None
with open(f"{d}/debunne_rate.log") as f:
    for line in f:
        m = re.match(r"== (\S+):", line)
        if m:
            name = m.group(1)
        m = re.search(r"updated ([0-9.]+) times a frame .* ([0-9]+) Hz on the clock", line)
        if m and name:
            tool[name] = (float(m.group(1)), float(m.group(2)))
        m = re.match(r"cpu: .*: ([0-9.]+) ms a frame", line)
        if m and name:
            cpu[name] = float(m.group(1))
runs = list(rows)
size = 0.065  # the liver's extent, m
out = []
for n in runs:
    rs = rows[n]
    ref = rows[next(r for r in runs if r.startswith("10k") == n.startswith("10k"))]
    ms = [float(r["frame_ms"]) for r in rs]
    work = [float(r["work"]) for r in rs]
    dp = max(sum((float(a[k]) - float(b[k])) ** 2 for k in ("probe_x", "probe_y", "probe_z")) ** 0.5
             for a, b in zip(rs, ref))
    fz_peak = max(abs(float(r["tool_fz"])) for r in ref)
    df = max(abs(float(a["tool_fz"]) - float(b["tool_fz"])) for a, b in zip(rs, ref))
    upd, hz = tool.get(n, (0, 0))
    out.append({"run": n, "frames": len(rs), "ms_mean": f"{sum(ms) / len(ms):.2f}", "ms_max": f"{max(ms):.2f}",
                "frames_per_s": f"{1000 * len(ms) / sum(ms):.2f}", "realtime": f"{10 * len(ms) / sum(ms):.3f}",
                "cpu_ms_per_frame": f"{cpu.get(n, 0):.2f}", "frames_over_10ms": sum(x > 10 for x in ms),
                "frames_over_10ms_cpu": sum(float(r["cpu_ms"]) > 10 for r in rs if r.get("cpu_ms")),
                "work_per_frame": f"{sum(work) / len(work):.0f}", "tool_updates_per_frame": f"{upd:.1f}",
                "tool_hz_clock": f"{hz:.0f}", "probe_diff_of_size": f"{dp / size:.2e}",
                "tool_fz_diff_of_peak": f"{df / fz_peak:.2e}"})
with open(f"{d}/debunne_rate_summary.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(out[0]))
    w.writeheader()
    w.writerows(out)
for o in out:
    print(o)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(1, 2, figsize=(11, 4))
for n in runs:
    rs = rows[n]
    t = [0.01 * int(r["frame"]) for r in rs]
    ax[0].plot(t, [float(r["frame_ms"]) for r in rs], label=n)
    ax[1].plot(t, [float(r["tool_fz"]) for r in rs], label=n)
ax[0].axhline(10, color="k", lw=0.5, ls="--")
ax[0].set_xlabel("simulated time, s")
ax[0].set_ylabel("wall time a 10 ms frame, ms")
ax[0].set_yscale("log")
ax[0].legend()
ax[1].set_xlabel("simulated time, s")
ax[1].set_ylabel("tool force z, N")
ax[1].legend()
fig.suptitle("mr-liver (181/705/2207 nodes; 10k*: and 10,724), 2-core Xeon shared")
fig.tight_layout()
fig.savefig(f"{d}/debunne_rate.png", dpi=90)
