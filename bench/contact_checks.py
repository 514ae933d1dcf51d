"""The contact report's acceptance checks, row by row, as markdown tables.

Reads the matrix and the rest table of bench/contact_report.sh and prints,
for every row, which checks it passes and which it fails by how much; with
older CSVs of the same script, the rows whose status or physics columns
changed (timings are not compared: they may come from another machine).

Usage: python3 bench/contact_checks.py MATRIX_CSV REST_CSV [OLD_MATRIX_CSV OLD_REST_CSV ...]
  The old CSVs come in pairs (matrix, rest); for a row found in more than one
  pair the last pair wins (e.g. the full sweep first, then a later sweep of
  the friction rows alone).

The bounds (issue 12, contact_report.md):
  status ok (not diverged); max_gain <= 0.01 (drop energies);
  rest strain < 0.01, or within 5 % of a static reference of the body on the
  floor (the rest table's static solve with the floor contacts pinned, the
  body set down without a drop on the same floor, or on a frictionless one:
  `static`, `placed`, `frictionless`; with friction also `held`, the rest
  state's own contact set: its stuck contacts pinned where they are, the
  rest frictionless, accepted only where every pin's reaction is within
  Coulomb's cone, held_coulomb <= 1, and none pulls, held_pulls 0);
  |volume_pct| <= 1; pen_mm <= 0.5;
  ke_per_kg < 1e-8 after 10 s on the floor (rest rows of 10 s); the warning
  counts cg_capped, energy_rise, unresolved (0 is clean: listed, not failed).
  The rest strain is judged on the rest table (10 s on the floor, its own
  references). A matrix row is 0.4-1 s long, often not yet at rest: its end
  strain is compared with the rest table's references of the same scene, dt
  and friction (corot-element's: used for corot-element rows only), and where it is
  above 0.01 and not within 5 % of one the row is `pass, strain open` (its
  other checks pass; `moving` where ke_per_kg is above 1e-6 J/kg), not
  failed."""
import csv
import sys

KEY = ("scene", "method", "integrator", "dt", "friction", "seconds")


def rows(path):
    return list(csv.DictReader(open(path)))


def key(r):
    return tuple(r[k] for k in KEY)


def f(r, c):
    try:
        return float(r[c])
    except (KeyError, ValueError):
        return float("nan")


def dt_name(dt):
    d = float(dt)
    for n in (30, 60, 100):
        if abs(d - 1.0 / n) < 1e-6:
            return "1/%d" % n
    return "%g" % d


def near(a, b, tol=0.05):
    return abs(a / b - 1) <= tol if b > 0 else False


def strain_refs(rest):
    """(scene, dt, friction) -> {name: reference strain} from the rest table."""
    out = {}
    for r in rest:
        if r["status"] != "ok":
            continue
        refs = {n: f(r, n + "_strain") for n in ("static", "placed", "frictionless")}
        if held_admissible(r):
            refs["held"] = f(r, "held_strain")
        out[(r["scene"], r["dt"], r["friction"])] = {n: v for n, v in refs.items() if v == v}
    return out


def held_admissible(r):
    """The held reference's condition: every pin's reaction within Coulomb's
    cone and none pulling (empty or missing columns: not admissible)."""
    return f(r, "held_coulomb") <= 1 and f(r, "held_pulls") == 0


def held_cell(r):
    """The rest table's held column: the strain, and why it is not a
    reference where it is not."""
    h = r.get("held_strain") or ""
    if not h:
        return "-"
    if held_admissible(r):
        return "%s (%s stuck, coulomb %.3g)" % (h, r["held_stuck"], f(r, "held_coulomb"))
    return "%s (not admissible: coulomb %.3g, pulls %s)" % (h, f(r, "held_coulomb"), r["held_pulls"])


def row_refs(refs, r):
    """The rest table's references for row r: they are corot-element's
    equilibria, so none for another method."""
    if r["method"] != "corot-element":
        return {}
    return refs.get((r["scene"], r["dt"], r["friction"]), {})


def strain_check(strain, refs):
    """'' when it passes, else what it misses by; the reference that passes
    it is named in the second item."""
    if strain < 0.01:
        return "", "< 0.01"
    for n, v in sorted(refs.items()):
        if near(strain, v):
            return "", "%.3g x %s" % (strain / v, n)
    if not refs:
        return "strain %.3g > 0.01 (no reference)" % strain, ""
    n, v = min(refs.items(), key=lambda kv: abs(strain / kv[1] - 1))
    return "strain %.3g > 0.01, %.3g x %s (closest)" % (strain, strain / v, n), ""


def checks(r, refs, rest_row):
    """The failures of row r (a list of strings) and the notes (the rest
    check's reference, moving, the warnings)."""
    fails, notes = [], []
    if r["status"] != "ok":
        fails.append("%s at step %s" % (r["status"], r["steps"]))
        return fails, notes
    g = f(r, "max_gain")
    if not (g <= 0.01):
        fails.append("max_gain %+.3g > 0.01" % g)
    v = f(r, "volume_pct")
    if not (abs(v) <= 1):
        fails.append("volume %+.3g %% (bound 1)" % v)
    p = f(r, "pen_mm")
    if not (p <= 0.5):
        fails.append("pen %.3g mm > 0.5" % p)
    s = f(r, "rest_strain")
    miss, how = strain_check(s, refs)
    ke = f(r, "ke_per_kg")
    if miss and not rest_row:
        notes.append("open: " + miss + (", moving (ke %.2g J/kg)" % ke if ke > 1e-6 else ""))
    elif miss:
        fails.append(miss)
    else:
        notes.append("strain " + how)
    if rest_row:
        if f(r, "seconds") >= 10:
            if not (ke < 1e-8):
                fails.append("ke %.3g J/kg >= 1e-8 after 10 s" % ke)
        else:
            notes.append("%s s: ke %.2g J/kg not judged" % (r["seconds"], ke))
    w = [(c, int(r[c])) for c in ("cg_capped", "energy_rise", "unresolved") if r[c] not in ("", "0")]
    if w:
        notes.append("warnings " + ", ".join("%s %d" % cw for cw in w))
    return fails, notes


def verdict(fails, notes=()):
    if fails:
        return "**FAIL**: " + "; ".join(fails)
    return "pass, strain open" if any(n.startswith("open") for n in notes) else "pass"


def table(rs, refs, rest_table):
    if rest_table:
        print("| scene | dt | mu | s | max_gain | rest_strain | static | placed | frictionless | held | volume % "
              "| pen mm | ke J/kg | capped/rise/unres | passes | cg | ms_step | checks | notes |")
        print("|" + "---|" * 19)
    else:
        print("| scene | method | integrator | dt | mu | s | max_gain | max_rise | rest_strain | volume % | pen mm "
              "| ke J/kg | capped/rise/unres | passes | cg | ms_step | checks | notes |")
        print("|" + "---|" * 18)
    for r in rs:
        fails, notes = checks(r, row_refs(refs, r), rest_table)
        warn = "%s/%s/%s" % (r["cg_capped"], r["energy_rise"], r["unresolved"])
        if rest_table:
            print("| %s | %s | %s | %s | %.3g | %.4g | %s | %s | %s | %s | %+.3g | %.2g | %.2g | %s | %s | %s | %s | %s "
                  "| %s |"
                  % (r["scene"], dt_name(r["dt"]), r["friction"], r["seconds"], f(r, "max_gain"), f(r, "rest_strain"),
                     r["static_strain"] or "-", r["placed_strain"] or "-", r["frictionless_strain"] or "-",
                     held_cell(r), f(r, "volume_pct"), f(r, "pen_mm"), f(r, "ke_per_kg"), warn, r["passes_mean"], r["cg_mean"],
                     r["ms_step"], verdict(fails, notes), "; ".join(notes)))
        else:
            print("| %s | %s | %s | %s | %s | %s | %.3g | %.3g | %.4g | %+.3g | %.2g | %.2g | %s | %s | %s | %s | %s | %s |"
                  % (r["scene"], r["method"], "IE" if r["integrator"] == "implicit-euler" else r["integrator"].upper(),
                     dt_name(r["dt"]), r["friction"], r["seconds"], f(r, "max_gain"), f(r, "max_rise"),
                     f(r, "rest_strain"), f(r, "volume_pct"), f(r, "pen_mm"), f(r, "ke_per_kg"), warn,
                     r["passes_mean"], r["cg_mean"], r["ms_step"], verdict(fails, notes), "; ".join(notes)))


PHYS = ("steps", "max_gain", "rest_strain", "volume_pct", "pen_mm", "ke_per_kg", "max_rise", "cg_mean", "passes_mean",
        "cg_capped", "energy_rise", "unresolved")


def differs(a, b, c):
    x, y = f(a, c), f(b, c)
    if x != x or y != y:
        return (x == x) != (y == y)
    if c == "volume_pct":
        return abs(x - y) > 0.02
    if c in ("pen_mm", "max_gain", "max_rise"):
        return abs(x - y) > 1e-4 + 1e-3 * max(abs(x), abs(y))
    if c == "ke_per_kg":
        return abs(x - y) > 1e-9 + 0.1 * max(abs(x), abs(y))
    return abs(x - y) > 0.01 * max(abs(x), abs(y))


def compare(new, old, refs_new, refs_old, rest_table):
    """Rows whose check status or physics columns differ from the old run."""
    same = 0
    missing = []
    print("| scene | method | integrator | dt | mu | s | checks before | checks now | changed (before -> now) |")
    print("|" + "---|" * 9)
    for r in new:
        o = old.get(key(r))
        if o is None:
            missing.append(r)
            continue
        vo = verdict(*checks(o, row_refs(refs_old, o), rest_table))
        vn = verdict(*checks(r, row_refs(refs_new, r), rest_table))
        ch = ["status %s -> %s" % (o["status"], r["status"])] if o["status"] != r["status"] else []
        ch += ["%s %s -> %s" % (c, o[c], r[c]) for c in PHYS if differs(o, r, c)]
        if not ch and vo == vn:
            same += 1
            continue
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |"
              % (r["scene"], r["method"], "IE" if r["integrator"] == "implicit-euler" else r["integrator"].upper(),
                 dt_name(r["dt"]), r["friction"], r["seconds"], vo, vn, "; ".join(ch) or "-"))
    print()
    print("%d rows unchanged (every physics column within its tolerance, same check status); rows not in the old "
          "CSVs: %s" % (same, ", ".join("/".join(key(r)) for r in missing) or "none"))


def main():
    new, rest = rows(sys.argv[1]), rows(sys.argv[2])
    refs = strain_refs(rest)
    print("### The matrix (%s)\n" % sys.argv[1].split("/")[-1])
    table(new, refs, False)
    print("\n### The rest table (%s)\n" % sys.argv[2].split("/")[-1])
    table(rest, refs, True)
    def count(rs, rest_table):
        v = [verdict(*checks(r, row_refs(refs, r), rest_table)) for r in rs]
        return v.count("pass"), v.count("pass, strain open"), len(v) - v.count("pass") - v.count("pass, strain open")
    print("\nMatrix (%d rows): %d pass every check, %d pass all but an open rest strain (above 0.01 at the end of "
          "the short run and not within 5 %% of a rest-table reference), %d fail." % ((len(new),) + count(new, False)))
    print("Rest table (%d rows): %d pass every check, %d fail." % ((len(rest),) + count(rest, True)[::2]))
    if len(sys.argv) > 3:
        old, old_rest = {}, {}
        for i in range(3, len(sys.argv) - 1, 2):
            old.update({key(r): r for r in rows(sys.argv[i])})
            old_rest.update({key(r): r for r in rows(sys.argv[i + 1])})
        refs_old = strain_refs(old_rest.values())
        print("\n### Against %s: the matrix\n" % ", ".join(a.split("/")[-1] for a in sys.argv[3:]))
        compare(new, old, refs, refs_old, False)
        print("\n### Against the same: the rest table\n")
        compare(rest, old_rest, refs, refs_old, True)


main()
