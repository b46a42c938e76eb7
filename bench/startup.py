#!/usr/bin/env python3
"""startup.py - time from exec to the end of a one-statement program, for TSL and its peers
(issue 15's start-up target: TSL under 5 ms). Prints rows in run.sh's JSON-lines format."""
import json, shutil, statistics, subprocess, sys, time

quick = len(sys.argv) > 1 and sys.argv[1] == "quick"
reps = 21 if quick else 51
peers = [("tsl-eager", ["bin/tsl", "-e", "x = 1"]),
         ("lua5.4", ["lua5.4", "-e", "x = 1"]),
         ("cpython", [sys.executable, "-S", "-c", "x = 1"])]
for impl, cmd in peers:
    if not shutil.which(cmd[0]) and not cmd[0].startswith("bin/"):
        continue
    subprocess.run(cmd, check=True)   # warm the page cache
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        t.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"workload": "start-up (x = 1)", "impl": impl, "ms": statistics.median(t),
                      "min": min(t), "max": max(t), "reps": reps}), flush=True)
