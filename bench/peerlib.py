"""peerlib.py - what the Python peers of `make bench` share (peers.py, compiled.py): timing with a
warm-up of at least 1 s and compile time reported apart, and the check of outputs against TSL's
(the .npy files workloads.tsl saves in CHECKDIR). Rows are JSON lines like workloads.tsl's."""
import json, os, statistics, sys, time

quick = False
reps = 7
warm_s = 1.0
suffix = ""          # "-2threads" in the 2-thread table
checkdir = None
only = None          # only=TEXT: measure and check only the workloads whose name contains TEXT
failed = []          # the mismatches with TSL's outputs; the caller exits 1 when there are any


def setup(args):
    """Reads [CHECKDIR] [quick] [threads2] [only=TEXT] from the command line's arguments."""
    global quick, reps, warm_s, suffix, checkdir, only
    quick = "quick" in args
    reps = 5 if quick else 7
    warm_s = 0.2 if quick else 1.0
    suffix = "-2threads" if "threads2" in args else ""
    only = next((a[5:] for a in args if a.startswith("only=")), None)
    dirs = [a for a in args if a not in ("quick", "threads2") and not a.startswith("only=")]
    checkdir = dirs[0] if dirs else None


def wanted(workload):
    """Whether this run measures `workload` (every one without only=TEXT). measure and check skip
    the others; a caller guards work that is costly to set up (compilation) with it too."""
    return only is None or only in workload


def emit(**row):
    print(json.dumps(row), flush=True)


def ready(r):
    """Waits for a jax result (jax dispatches asynchronously); other values pass through."""
    if hasattr(r, "block_until_ready"):
        r.block_until_ready()
    elif isinstance(r, (tuple, list)):
        for x in r:
            ready(x)
    return r


def measure(workload, impl, f, per=1, compile_ms=None):
    """First call, warm-up for warm_s, then `reps` timed calls; prints ms per call / per. For a compiled
    implementation (jit, compile) the first call minus a steady one is reported as its compile time,
    or compile_ms where the caller compiled ahead (torch.jit.trace + freeze)."""
    if not wanted(workload):
        return
    impl += suffix
    t0 = time.perf_counter()
    ready(f())
    first = (time.perf_counter() - t0) * 1000
    while time.perf_counter() - t0 < warm_s:
        ready(f())
    times = []
    for _ in range(reps):
        t1 = time.perf_counter()
        ready(f())
        times.append((time.perf_counter() - t1) * 1000)
    times.sort()
    med = statistics.median(times)
    emit(workload=workload, impl=impl, ms=med / per, min=times[0] / per, max=times[-1] / per, reps=reps)
    if "jit" in impl or "compile" in impl:
        if compile_ms is None:
            compile_ms = max(first - med, 0.0)
        emit(stat="compile ms", workload=workload, impl=impl, value=round(compile_ms, 2))


def load(name):
    import numpy as np
    return np.load(os.path.join(checkdir, name + ".npy"))


def check(workload, impl, got, name, rtol, atol):
    """Compares an output with TSL's (CHECKDIR/NAME.npy); a mismatch is reported and fails the run."""
    import numpy as np
    if not wanted(workload):
        return
    impl += suffix
    got = np.asarray(got, dtype=np.float32).reshape(-1)
    want = load(name).reshape(-1)
    diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    emit(stat="max abs diff vs TSL", workload=workload, impl=impl, value=diff)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
        failed.append("%s / %s: %s differs from TSL's (max abs diff %g, rtol %g, atol %g)" %
                      (workload, impl, name, diff, rtol, atol))
        print("OUTPUT MISMATCH: " + failed[-1], file=sys.stderr, flush=True)


def finish(prog):
    """Exits 1, loudly, when an output differed from TSL's."""
    if failed:
        print("%s: %d outputs differ from TSL's:\n  %s" % (prog, len(failed), "\n  ".join(failed)), file=sys.stderr)
        sys.exit(1)


# The transformer block's parameters, in the order workloads.tsl saves them (block_names).
BLOCK = [("g1", (128,)), ("c1", (128,)), ("wq", (128, 128)), ("wk", (128, 128)), ("wv", (128, 128)),
         ("wo", (128, 128)), ("g2", (128,)), ("c2", (128,)), ("w1", (128, 512)), ("b1", (512,)),
         ("w2", (512, 128)), ("b2", (128,))]


def block_params():
    """The transformer block's parameters by name, from TSL's flat vector (CHECKDIR/block_params.npy)."""
    flat, out, at = load("block_params"), {}, 0
    for name, shape in BLOCK:
        size = 1
        for d in shape:
            size *= d
        out[name] = flat[at:at + size].reshape(shape)
        at += size
    return out


# The CNN of workloads.tsl section 11: its weights in the order TSL saves them (cnn_flat), torch's
# layouts (conv weights [out, in, kh, kw]), but the linear layer's weight stored [in, out].
CNN = (("c1_w", (16, 1, 3, 3)), ("c1_b", (16,)), ("c2_w", (32, 16, 3, 3)), ("c2_b", (32,)),
       ("fc_w", (128, 10)), ("fc_b", (10,)))
W_CNN = "CNN training step conv16-pool-conv32-pool-fc10, batch 32 (per step)"
CNN_STEPS = 20       # steps per timed call, as workloads.tsl's cnn_steps


def cnn_params(name="cnn_params0"):
    """The CNN's weights as a list in CNN's order, from TSL's flat vector CHECKDIR/NAME.npy."""
    flat, out, at = load(name), [], 0
    for _, shape in CNN:
        size = 1
        for d in shape:
            size *= d
        out.append(flat[at:at + size].reshape(shape).copy())
        at += size
    assert at == flat.size
    return out
