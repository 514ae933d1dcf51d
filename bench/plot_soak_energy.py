"""The soak_energy trace (bench/soak_energy.sh): total energy against time,
one panel per bar.   python3 plot_soak_energy.py TRACE.csv OUT.png"""
import csv, sys
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
bars = ['20x2x2', '8x1x1']
fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=False)
for ax, bar in zip(axes, bars):
    keys = []
    for r in rows:
        k = (r['build'], r['method'], r['integrator'], r['dt'])
        if r['bar'] == bar and k not in keys: keys.append(k)
    for k in keys:
        pts = [(float(r['t']), float(r['energy_J'])) for r in rows
               if r['bar'] == bar and (r['build'], r['method'], r['integrator'], r['dt']) == k]
        style = '--' if k[0] == 'before' else ('-' if k[1] == 'warp-vertex' else ':')
        dt = k[3]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, lw=1,
                label=f"{k[1]} {k[2]} dt {dt}{' (before)' if k[0] == 'before' else ''}")
    ax.axhline(0, color='k', lw=0.5)
    ax.set_title(f"undamped bar 1 x 0.1 x 0.1 m, {bar} cells")
    ax.set_xlabel('t, s')
    ax.set_ylabel('total energy - start, J')
    ax.set_ylim(-20, 17)
    ax.legend(fontsize=6, ncol=2)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
