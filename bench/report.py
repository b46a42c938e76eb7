#!/usr/bin/env python3
"""report.py RAW.jsonl MACHINE.txt OUTDIR [EXPLAIN.txt] - turns the JSON lines of one `make bench` run into
OUTDIR/results.md (a table of medians, spreads and ratios against TSL), OUTDIR/results.json
and OUTDIR/results.png (a gnuplot bar chart of time relative to TSL, log scale)."""
import json, os, shutil, subprocess, sys

raw, machine_file, outdir = sys.argv[1:4]
explain_file = sys.argv[4] if len(sys.argv) > 4 else None
allrows = [json.loads(l) for l in open(raw) if l.strip().startswith("{")]
rows = [r for r in allrows if "stat" not in r]
stats = [r for r in allrows if "stat" in r]
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

lines = ["# Benchmark results", "", "```", machine, "```", "",
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
          "torch-jit-script": "#7570b3", "torch-jit-trace-freeze": "#a6761d", "torch-compile": "#666666", "cpython": "#1f78b4",
          "lua5.4": "#333333", "c-floor": "#e7298a"}

if shutil.which("gnuplot"):
    impls = []
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    dat = os.path.join(outdir, "out", "chart.dat")
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
