"""The momentum diagnostic's per-step lines (tw_contact_report,
TW_CONTACT_REPORT_MOMENTUM) of bench/armadillo_spin.sh's logs into one CSV
and a plot: |L_up| and the kinetic energy's rigid rotation against time.

Usage: plot_armadillo_spin.py OUT_PREFIX LOG... (writes OUT_PREFIX.csv, .png;
a log whose name holds "_old" or "_new" is labelled so)."""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

LINE = re.compile(
    r"momentum step (\d+) t ([\d.]+): L_up (\S+) kg m\^2/s, \|P_horizontal\| (\S+) kg m/s, kinetic J/kg: "
    r"translation (\S+) rotation (\S+) \(omega_up (\S+) rad/s\) deformation (\S+); dL_up (\S+): (.*?); ")
PARTS = ["elastic", "stiffness", "beta", "alpha", "residual", "contact_n", "contact_t", "projection", "check"]


def main():
    prefix, logs = sys.argv[1], sys.argv[2:]
    rows = []
    for log in logs:
        run = log.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        for line in open(log):
            m = LINE.match(line)
            if not m:
                continue
            terms = dict(zip(m.group(10).split()[0::2], m.group(10).split()[1::2]))
            rows.append([run] + list(m.groups()[:9]) + [terms[p] for p in PARTS])
    with open(prefix + ".csv", "w") as f:
        f.write("run,step,t,L_up,P_horizontal,ke_translation,ke_rotation,omega_up,ke_deformation,dL_up," +
                ",".join("dL_" + p for p in PARTS) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for run in dict.fromkeys(r[0] for r in rows):
        t = [float(r[2]) for r in rows if r[0] == run]
        ax[0].semilogy(t, [abs(float(r[3])) + 1e-12 for r in rows if r[0] == run], label=run)
        ax[1].semilogy(t, [abs(float(r[6])) + 1e-16 for r in rows if r[0] == run], label=run)
    ax[0].set_ylabel("|L_up| about the centre of mass, kg m^2/s")
    ax[1].set_ylabel("kinetic energy of the rigid rotation, J/kg")
    ax[1].axhline(1e-8, color="k", lw=0.5, ls="--")
    for a in ax:
        a.set_xlabel("t, s")
        a.legend(fontsize=7)
    fig.suptitle("armadillo, corot-element, implicit Euler, frictionless floor")
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=110)


if __name__ == "__main__":
    main()
