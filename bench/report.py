#!/usr/bin/env python3
"""report.py RAW.jsonl MACHINE.txt OUTDIR [EXPLAIN.txt] - turns the JSON lines of one `make bench` run into
OUTDIR/results.md (a summary with one column per implementation and "TSL vs best peer", the 2-thread
table, compile times, then every row with its spread and ratio against TSL), OUTDIR/results.json
and OUTDIR/results.png (a gnuplot bar chart of time relative to TSL, log scale)."""
import json, os, shutil, subprocess, sys

raw, machine_file, outdir = sys.argv[1:4]
explain_file = sys.argv[4] if len(sys.argv) > 4 else None
allrows = [json.loads(l) for l in open(raw) if l.strip().startswith("{")]
rows = [r for r in allrows if "stat" not in r]
stats = [r for r in allrows if "stat" in r and r["stat"] != "compile ms"]
compiles = [r for r in allrows if r.get("stat") == "compile ms"]
machine = open(machine_file).read().strip()
order = []
for r in rows:
    if r["workload"] not in order:
        order.append(r["workload"])
ref_impl = "tsl-static"

def ref(w):
    for impl in (ref_impl, "tsl-eager"):
        for r in rows:
            if r["workload"] == w and r["impl"] == impl:
                return r["ms"]
    return None

# The summary's columns, in this order where present; "best peer" is the fastest non-TSL one but the C floor.
COLUMNS = ["tsl-eager", "tsl-static", "numpy", "torch-eager", "torch-jit-script", "torch-jit-trace-freeze",
           "torch-compile", "jax-jit", "cpython", "lua5.4", "c-floor"]
NOT_PEERS = ("tsl-eager", "tsl-static", "c-floor")


def ms(w, impl):
    m = [r["ms"] for r in rows if r["workload"] == w and r["impl"] == impl]
    return m[0] if m else None


def versus(tsl, peers):
    """'ahead 1.20x (numpy)' or '1.20x behind (jax-jit)' against the fastest of peers {impl: ms}."""
    if tsl is None or not peers:
        return "-"
    best = min(peers, key=peers.get)
    if tsl <= peers[best]:
        return "ahead %.2fx (%s)" % (peers[best] / tsl, best)
    return "**%.2fx behind** (%s)" % (tsl / peers[best], best)


def summary(title, ws, cols, tsl_impls, note):
    """A table: one row per workload, one column per implementation (median ms), and TSL vs best peer."""
    cols = [c for c in cols if any(ms(w, c) is not None for w in ws)]
    out = ["## " + title, "", note, "", "| workload | " + " | ".join(cols) + " | TSL vs best peer |",
           "|---|" + "---:|" * len(cols) + "---|"]
    for w in ws:
        cells = ["%.4g" % ms(w, c) if ms(w, c) is not None else "" for c in cols]
        tsl = next((ms(w, t) for t in tsl_impls if ms(w, t) is not None), None)
        peers = {c: ms(w, c) for c in cols if c not in tsl_impls and c not in NOT_PEERS and ms(w, c) is not None}
        out.append("| %s | %s | %s |" % (w, " | ".join(cells), versus(tsl, peers)))
    return out + [""]


one = [w for w in order if not w.startswith("compile:") and any(ms(w, c) is not None for c in COLUMNS)]
two = [w for w in order if any(r["workload"] == w and r["impl"].endswith("-2threads") for r in rows)]
two_cols = ["tsl-static-2threads", "numpy-2threads", "torch-eager-2threads", "torch-compile-2threads", "jax-jit-2threads"]
lines = ["# Benchmark results", "", "```", machine, "```", ""]
lines += summary("One thread", one, COLUMNS, ("tsl-static", "tsl-eager"),
                 "Median ms per call, every process on one core (`taskset -c 0`), one thread. **TSL vs best peer** "
                 "compares TSL static (eager where there is no static row) with the fastest peer other than the C floor.")
if two:
    lines += summary("Two threads", two, two_cols, ("tsl-static-2threads",),
                     "Median ms, processes on cores 0 and 1 (`taskset -c 0,1`): `tsl --threads 2`, "
                     "`torch.set_num_threads(2)`, XLA with two cores.")
if compiles:
    cimpls = []
    for r in compiles:
        if r["impl"] not in cimpls:
            cimpls.append(r["impl"])
    cws = [w for w in order if any(r["workload"] == w for r in compiles)]
    lines += ["## Compile times", "",
              "Peers: first call minus a steady call, ms (tracing and compilation; torch.compile's cache in "
              "build/torchinductor-cache makes later runs faster). TSL static: the `compiled static` lines further down.", "",
              "| workload | " + " | ".join(cimpls) + " |", "|---|" + "---:|" * len(cimpls)]
    for w in cws:
        vals = [[r["value"] for r in compiles if r["workload"] == w and r["impl"] == i] for i in cimpls]
        lines.append("| %s | %s |" % (w, " | ".join("%.4g" % v[0] if v else "" for v in vals)))
    lines += [""]
lines += ["## Every row", "",
         "Median of the repetitions (one thread everywhere, warm-up excluded); spread is min..max.",
         "**ratio** = that implementation's time / TSL static's time (TSL eager's where a workload has no static row): above 1 means TSL static is faster.", "",
         "| workload | implementation | median ms | spread ms | ratio |", "|---|---|---:|---:|---:|"]
for w in order:
    if w.startswith("compile:"):
        continue
    base = ref(w)
    for r in sorted((r for r in rows if r["workload"] == w), key=lambda r: r["ms"]):
        ratio = "%.2f" % (r["ms"] / base) if base else "-"
        lines.append("| %s | %s | %.4g | %.4g..%.4g | %s |" % (w, r["impl"], r["ms"], r["min"], r["max"], ratio))
if stats:
    lines += ["", "| statistic | workload | implementation | value |", "|---|---|---|---:|"]
    for r in stats:
        lines.append("| %s | %s | %s | %g |" % (r["stat"], r["workload"], r["impl"], r["value"]))
if explain_file and os.path.exists(explain_file):
    lines += ["", "Compile time of each static block (TSL_EXPLAIN=1, bench/workloads.tsl):", "", "```"]
    lines += [l.rstrip() for l in open(explain_file) if "compiled static" in l]
    lines += ["```"]
    eager = [l.rstrip() for l in open(explain_file) if "runs eagerly" in l]
    if eager:
        lines += ["", "Static code that ran eagerly (the tsl-static rows of these workloads time eager code):",
                  "", "```"] + eager + ["```"]
open(os.path.join(outdir, "results.md"), "w").write("\n".join(lines) + "\n")
json.dump({"machine": machine, "results": rows, "stats": stats}, open(os.path.join(outdir, "results.json"), "w"), indent=1)
print("\n".join(lines))

COLORS = {"tsl-static": "#1b9e77", "tsl-eager": "#66c2a5", "numpy": "#e6ab02", "torch-eager": "#d95f02",
          "torch-jit-script": "#7570b3", "torch-jit-trace-freeze": "#a6761d", "torch-compile": "#666666",
          "jax-jit": "#e31a1c", "cpython": "#1f78b4",
          "lua5.4": "#333333", "c-floor": "#e7298a"}

if shutil.which("gnuplot"):
    impls = []
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    dat = os.path.join(os.path.dirname(raw), "chart.dat")   # beside the raw rows (bench/out)
    with open(dat, "w") as f:
        f.write("workload " + " ".join(impls) + "\n")
        for w in order:
            if w.startswith("compile:"):
                continue
            base = ref(w)
            vals = []
            for i in impls:
                m = [r["ms"] for r in rows if r["workload"] == w and r["impl"] == i]
                vals.append("%.5g" % (m[0] / base) if m and base else "NaN")
            f.write('"%s" %s\n' % (w.replace(" (per pass)", ""), " ".join(vals)))
    script = """
set terminal pngcairo size 1400,700 noenhanced font ',10'
set output '%s'
set title 'Time relative to TSL static (TSL eager where no static row); lower is faster; log scale'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set yrange [0.05:100]
set ylabel 'time / TSL time'
set xtics rotate by 30 right scale 0 offset 0,0
set key outside right top
set grid ytics
plot %s
""" % (os.path.join(outdir, "results.png"),
       ", ".join("'%s' using %d:xtic(1) title columnhead(%d) lc rgb '%s'" % (dat, i + 2, i + 2, COLORS.get(impl, "#888888"))
                 for i, impl in enumerate(impls)))
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True)
        print("chart: %s" % os.path.join(outdir, "results.png"))
    except (subprocess.CalledProcessError, OSError) as e:
        print("chart not drawn: %s" % e, file=sys.stderr)
else:
    print("gnuplot not found: no chart", file=sys.stderr)
