#!/usr/bin/env python3
"""compiled.py - the compiled peers of `make bench`: jax.jit (XLA) and torch.compile (inductor) on the
workloads of workloads.tsl, run by bench/run.sh with the virtual environment's Python
(build/bench-venv, made by bench/venv.sh) under `taskset -c 0` (XLA sizes its thread pool by the
cores it may run on and ignores thread flags).

Usage: compiled.py CHECKDIR [quick] [threads2] [only=TEXT]   (timing and checks: peerlib.py)
  CHECKDIR  the .npy files workloads.tsl saved: the inputs every checked workload runs on and TSL's
            outputs, which each implementation's outputs must match within float tolerance
  quick     shorter sizes and warm-up, as workloads.tsl quick
  threads2  the 2-thread table: only the MLP and tanh-GELU rows, torch on 2 threads, impl names
            ending in -2threads (run.sh runs it under `taskset -c 0,1`)
  only=TEXT only the workloads whose name contains TEXT (bench/run.sh's BENCH_ONLY)

Prints JSON lines like workloads.tsl: one per measurement, plus {"stat": "compile ms", ...} (first
call minus a steady call: tracing and compilation) and {"stat": "max abs diff vs TSL", ...}. Exits 1
after all rows when an output does not match TSL's."""
import os, sys
import numpy as np
import peerlib
from peerlib import measure, check, load, BLOCK, block_params, W_CNN, CNN_STEPS, cnn_params

peerlib.setup(sys.argv[1:])
quick = peerlib.quick
threads2 = peerlib.suffix != ""


# ---- shared data: sizes as in workloads.tsl, inputs from TSL's files ----
n_gelu = 1000000 if quick else 4000000
steps = 2000 if quick else 10000
passes = 100 if quick else 1000
block_reps = 3 if quick else 10
gelu_x = load("gelu_x")
assert gelu_x.shape == (n_gelu,), "CHECKDIR holds another size of run (quick or not)"
rnn_W, rnn_xs = load("rnn_W"), load("rnn_xs")
norm_x, norm_g, norm_b = load("norm_x"), load("norm_g"), load("norm_b")
W_CONV = "conv2d 3-16-32 32x32 batch 32, forward + backward"
CONV = (("w1", (16, 3, 3, 3)), ("b1", (16,)), ("w2", (32, 16, 3, 3)), ("b2", (32,)))


def conv_params():
    """workloads.tsl section 10's weights, from its conv_params.npy (w1, b1, w2, b2 flattened)."""
    flat, out, at = load("conv_params"), {}, 0
    for k, shape in CONV:
        n = int(np.prod(shape))
        out[k] = flat[at:at + n].reshape(shape)
        at += n
    return out


def mlp_layers():
    """The 45 layers' (w [in, out], b [out]) from TSL's flat parameter vector."""
    flat, out, at = load("mlp_params"), [], 0
    for i, o in [(512, 512)] * 42 + [(512, 256), (256, 128), (128, 2)]:
        w = flat[at:at + i * o].reshape(i, o)
        at += i * o
        out.append((w, flat[at:at + o]))
        at += o
    assert at == flat.size
    return out


digits = np.loadtxt("examples/data/digits.csv", delimiter=",", dtype=np.float32)
digits = digits[np.random.default_rng(0).permutation(len(digits))]
digits_batches = [(digits[s:s + 32, :64] / 16, digits[s:s + 32, 64].astype(np.int64)) for s in range(0, 1437, 32)]
V, H, T, B = 38, 64, 32, 16
rng = np.random.default_rng(0)
crnn_xs = rng.integers(0, V, (T, B))
crnn_ys = rng.integers(0, V, (T, B))
crnn_init = [rng.standard_normal((V, H), dtype=np.float32) / np.float32(V ** 0.5),
             rng.standard_normal((H, H), dtype=np.float32) * np.float32(0.5 / H ** 0.5), np.zeros(H, np.float32),
             rng.standard_normal((H, V), dtype=np.float32) / np.float32(H ** 0.5), np.zeros(V, np.float32)]

W_GELU = "tanh-GELU %dM" % (n_gelu // 1000000)
W_RNN = "RNN cell 16 x %d" % steps
W_MLP = "MLP 45 layers, batch %d (per pass)"
W_SOFTMAX = "softmax [256, 1024] rows"
W_LN = "layernorm [256, 1024] rows"
W_BLOCK = "transformer block T=128 D=128, forward + backward"
W_DIGITS = "digits MLP 64-128-10, one epoch (45 steps of batch 32)"
W_DIGITS_FTZ = "digits MLP 64-128-10, one epoch, subnormals flushed"
W_CRNN = "char-RNN step, 32 time steps x 16 windows (per step)"


def adam_step(lr):
    """jax: Adam written out, with PyTorch's bias correction and eps; step(params, state, grads)."""
    import jax.numpy as jnp

    def step(params, state, grads):
        m, v, t = state
        t = t + 1
        m = [0.9 * mi + 0.1 * gi for mi, gi in zip(m, grads)]
        v = [0.999 * vi + 0.001 * gi * gi for vi, gi in zip(v, grads)]
        params = [p - lr * (mi / (1 - 0.9 ** t)) / (jnp.sqrt(vi / (1 - 0.999 ** t)) + 1e-8)
                  for p, mi, vi in zip(params, m, v)]
        return params, (m, v, t)
    return step


def adam_init(params):
    import jax.numpy as jnp
    return ([jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], jnp.zeros((), jnp.float32))


def adam_train_step(loss_fn, lr):
    """jax: one jitted training step, step(params, state, *batch) -> (params, state, loss): loss_fn's
    value and gradient, then adam_step(lr)."""
    import jax
    adam = adam_step(lr)

    @jax.jit
    def step(params, state, *batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
        params, state = adam(params, state, grads)
        return params, state, loss
    return step


def run_jax():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    def layernorm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        d = x - m
        return d / jnp.sqrt(jnp.mean(d * d, axis=-1, keepdims=True) + 1e-5) * g + b

    x = jnp.asarray(gelu_x)
    f = jax.jit(gelu)
    measure(W_GELU, "jax-jit", lambda: f(x))
    check(W_GELU, "jax-jit", f(x), "gelu_y", 1e-5, 1e-6)

    layers = [(jnp.asarray(w), jnp.asarray(b)) for w, b in mlp_layers()]

    def mlp(layers, h):
        for j, (w, b) in enumerate(layers):
            h = h @ w + b
            if j in (42, 43):
                h = jnp.maximum(h, 0)
        return h

    mlp_j = jax.jit(mlp)
    mlp_rand = jax.jit(lambda layers, key: mlp(layers, jax.random.normal(key, (1, 512))))
    keys = jax.random.split(jax.random.PRNGKey(0), passes)

    def mlp_passes():
        for i in range(passes):
            r = mlp_rand(layers, keys[i])
        return r

    measure(W_MLP % 1, "jax-jit", mlp_passes, passes)
    for batch in (64, 256):
        bpasses = (640 if quick else 2560) // batch
        xb = jnp.asarray(load("mlp_x64")) if batch == 64 else jax.random.normal(jax.random.PRNGKey(1), (batch, 512))

        def mlp_batch():
            for _ in range(bpasses):
                r = mlp_j(layers, xb)
            return r

        measure(W_MLP % batch, "jax-jit", mlp_batch, bpasses)
        if batch == 64:
            check(W_MLP % 64, "jax-jit", mlp_j(layers, xb), "mlp_y64", 1e-3, 1e-4)
    if threads2:
        return

    W, xs = jnp.asarray(rnn_W), jnp.asarray(rnn_xs)
    rnn = jax.jit(lambda W, xs: lax.scan(lambda h, x: (jnp.tanh(h @ W + x), None), jnp.zeros((1, 16)), xs)[0])
    measure(W_RNN, "jax-jit", lambda: rnn(W, xs))
    check(W_RNN, "jax-jit", rnn(W, xs), "rnn_h", 1e-4, 1e-5)

    sx, sg, sb = jnp.asarray(norm_x), jnp.asarray(norm_g), jnp.asarray(norm_b)
    sm = jax.jit(lambda x: jax.nn.softmax(x, axis=-1))
    measure(W_SOFTMAX, "jax-jit", lambda: sm(sx))
    check(W_SOFTMAX, "jax-jit", sm(sx), "softmax_y", 1e-4, 1e-7)
    ln = jax.jit(layernorm)
    measure(W_LN, "jax-jit", lambda: ln(sx, sg, sb))
    check(W_LN, "jax-jit", ln(sx, sg, sb), "layernorm_y", 1e-4, 1e-4)

    def block_loss(p, x):
        h = layernorm(x, p["g1"], p["c1"])
        a = jax.nn.softmax((h @ p["wq"]) @ (h @ p["wk"]).T / np.sqrt(128), axis=-1)
        x = x + (a @ (h @ p["wv"])) @ p["wo"]
        h = layernorm(x, p["g2"], p["c2"])
        y = x + gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return jnp.mean(y * y)

    bp = {k: jnp.asarray(v) for k, v in block_params().items()}
    bx = jnp.asarray(load("block_x"))
    bvg = jax.jit(jax.value_and_grad(block_loss))

    def block_steps():
        for _ in range(block_reps):
            r = bvg(bp, bx)
        return r

    measure(W_BLOCK, "jax-jit", block_steps, block_reps)
    loss, g = bvg(bp, bx)
    check(W_BLOCK, "jax-jit", loss, "block_loss", 1e-4, 1e-6)
    check(W_BLOCK, "jax-jit", np.concatenate([np.ravel(g[k]) for k, _ in BLOCK]), "block_grads", 1e-3, 1e-5)

    def conv_loss(p, x):
        dn = ("NCHW", "OIHW", "NCHW")
        conv = lambda x, w, b: lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=dn) + b[None, :, None, None]
        y = conv(jax.nn.relu(conv(x, p["w1"], p["b1"])), p["w2"], p["b2"])
        return jnp.mean(y * y)

    cp = {k: jnp.asarray(v) for k, v in conv_params().items()}
    cx = jnp.asarray(load("conv_x"))
    cvg = jax.jit(jax.value_and_grad(conv_loss))

    def conv_steps():
        for _ in range(3):
            r = cvg(cp, cx)
            jax.block_until_ready(r)
        return r

    measure(W_CONV, "jax-jit", conv_steps, 3)
    loss, g = cvg(cp, cx)
    check(W_CONV, "jax-jit", loss, "conv_loss", 1e-4, 1e-6)
    check(W_CONV, "jax-jit", np.concatenate([np.ravel(g[k]) for k, _ in CONV]), "conv_grads", 1e-3, 1e-5)

    def digits_loss(params, xb, yb):
        w1, b1, w2, b2 = params
        logits = jnp.maximum(xb @ w1 + b1, 0) @ w2 + b2
        return -jnp.mean(jnp.sum(jax.nn.one_hot(yb, 10) * jax.nn.log_softmax(logits, axis=1), axis=1))

    digits_step = adam_train_step(digits_loss, 0.02)

    r = np.random.default_rng(0)
    dparams = [jnp.asarray(r.uniform(-1 / 8, 1 / 8, (64, 128)).astype(np.float32)),
               jnp.asarray(r.uniform(-1 / 8, 1 / 8, 128).astype(np.float32)),
               jnp.asarray(r.uniform(-1 / 128 ** 0.5, 1 / 128 ** 0.5, (128, 10)).astype(np.float32)),
               jnp.asarray(r.uniform(-1 / 128 ** 0.5, 1 / 128 ** 0.5, 10).astype(np.float32))]
    dstate = [dparams, adam_init(dparams)]
    dbatches = [(jnp.asarray(a), jnp.asarray(b)) for a, b in digits_batches]

    def digits_epoch():
        for xb, yb in dbatches:
            dstate[0], dstate[1], loss = digits_step(dstate[0], dstate[1], xb, yb)
        return loss

    measure(W_DIGITS, "jax-jit", digits_epoch)
    # XLA's CPU code always flushes subnormals (its MXCSR has FTZ and DAZ on): this row is
    # the same computation as the last, from fresh parameters, timed again for the table
    dstate[:] = [dparams, adam_init(dparams)]
    measure(W_DIGITS_FTZ, "jax-jit", digits_epoch)

    def window_loss(p, xs, ys):
        wx, wh, bh, wy, by = p
        h = jnp.zeros((xs.shape[1], H))
        total = jnp.zeros(())
        for t in range(xs.shape[0]):
            h = jnp.tanh(jax.nn.one_hot(xs[t], V) @ wx + h @ wh + bh)
            total = total - jnp.sum(jax.nn.one_hot(ys[t], V) * jax.nn.log_softmax(h @ wy + by, axis=1))
        return total / (xs.shape[0] * xs.shape[1])

    crnn_step = adam_train_step(window_loss, 0.01)

    cparams = [jnp.asarray(p) for p in crnn_init]
    cstate = [cparams, adam_init(cparams)]
    cxs, cys = jnp.asarray(crnn_xs), jnp.asarray(crnn_ys)

    def crnn_steps():
        for _ in range(20):
            cstate[0], cstate[1], loss = crnn_step(cstate[0], cstate[1], cxs, cys)
        return loss

    measure(W_CRNN, "jax-jit", crnn_steps, 20)


_torch_ready = False


def import_torch():
    """torch, set up once for torch.compile: threads, seed, inductor's configuration."""
    global _torch_ready
    # torch's libraries opened RTLD_GLOBAL: inductor's check of the CPU's vector ISA dlopens a test
    # kernel that needs torch's SLEEF symbols; without them it decides on scalar code (torch 2.15)
    os.environ.setdefault("TORCH_USE_RTLD_GLOBAL", "1")
    import torch
    if not _torch_ready:
        _torch_ready = True
        torch.set_num_threads(2 if threads2 else 1)
        torch.manual_seed(0)
        import torch._inductor.config as inductor_config
        inductor_config.freezing = True   # inference graphs: weights folded as constants (torch.jit.freeze's job)
        from torch._inductor import cpu_vec_isa
        print("torch.compile: inductor's vector ISA: %s" % cpu_vec_isa.pick_vec_isa(), file=sys.stderr)
    return torch


def tc(f):
    """torch.compile with static shapes: each shape its own graph, as jax.jit and TSL static."""
    return import_torch().compile(f, dynamic=False)


def run_torch():
    torch = import_torch()
    import torch.nn.functional as F

    def gelu(x):
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    def layernorm(x, g, b):
        return F.layer_norm(x, (x.shape[-1],), g, b, 1e-5)

    t = torch.from_numpy
    layers = [(t(w), t(b)) for w, b in mlp_layers()]

    def mlp(h):
        for j, (w, b) in enumerate(layers):
            h = h @ w + b
            if j in (42, 43):
                h = torch.relu(h)
        return h

    impls = [("torch-compile", tc)]
    if threads2:
        impls.append(("torch-eager", lambda f: f))   # the same torch on 2 threads, for the 2-thread table
    with torch.no_grad():
        for impl, wrap in impls:
            x = t(gelu_x)
            f = wrap(gelu)
            measure(W_GELU, impl, lambda: f(x))
            check(W_GELU, impl, f(x), "gelu_y", 1e-5, 1e-6)
            m = wrap(mlp)

            def mlp_passes():
                for _ in range(passes):
                    r = m(torch.randn(1, 512))
                return r

            measure(W_MLP % 1, impl, mlp_passes, passes)
            for batch in (64, 256):
                bpasses = (640 if quick else 2560) // batch
                xb = t(load("mlp_x64")) if batch == 64 else torch.randn(batch, 512)

                def mlp_batch():
                    for _ in range(bpasses):
                        r = m(xb)
                    return r

                measure(W_MLP % batch, impl, mlp_batch, bpasses)
                if batch == 64:
                    check(W_MLP % 64, impl, m(xb), "mlp_y64", 1e-3, 1e-4)
        if threads2:
            return

        W, xs = t(rnn_W), t(rnn_xs)
        try:
            # the time loop as one compiled graph: torch's scan operator
            from torch._higher_order_ops.scan import scan

            def rnn(W, xs):
                return scan(lambda h, x: (torch.tanh(h @ W + x), h.clone()), torch.zeros(1, 16), xs.unsqueeze(1))[0]

            rnn_c = tc(rnn)
            rnn_c(W, xs)
            how = "scan"
        except Exception as e:   # an older or newer torch without a scan that compiles: the cell compiled
            cell = tc(lambda h, x: torch.tanh(h @ W + x))

            def rnn_c(W, xs):
                h = torch.zeros(1, 16)
                for i in range(xs.shape[0]):
                    h = cell(h, xs[i])
                return h

            how = "compiled cell in a Python loop (scan failed: %s)" % str(e).splitlines()[0][:100]
        print("torch-compile RNN: " + how, file=sys.stderr)
        measure(W_RNN, "torch-compile", lambda: rnn_c(W, xs))
        check(W_RNN, "torch-compile", rnn_c(W, xs), "rnn_h", 1e-4, 1e-5)

        sx, sg, sb = t(norm_x), t(norm_g), t(norm_b)
        sm = tc(lambda x: torch.softmax(x, dim=-1))
        measure(W_SOFTMAX, "torch-compile", lambda: sm(sx))
        check(W_SOFTMAX, "torch-compile", sm(sx), "softmax_y", 1e-4, 1e-7)
        ln = tc(layernorm)
        measure(W_LN, "torch-compile", lambda: ln(sx, sg, sb))
        check(W_LN, "torch-compile", ln(sx, sg, sb), "layernorm_y", 1e-4, 1e-4)

    def block_loss(p, x):
        h = layernorm(x, p["g1"], p["c1"])
        a = torch.softmax((h @ p["wq"]) @ (h @ p["wk"]).T / 128 ** 0.5, dim=-1)
        x = x + (a @ (h @ p["wv"])) @ p["wo"]
        h = layernorm(x, p["g2"], p["c2"])
        y = x + gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return torch.mean(y * y)

    bp = {k: t(v.copy()).requires_grad_() for k, v in block_params().items()}
    bx = t(load("block_x"))
    bl = tc(block_loss)

    def block_step():
        for p in bp.values():
            p.grad = None
        loss = bl(bp, bx)
        loss.backward()
        return loss

    def block_steps():
        for _ in range(block_reps):
            r = block_step()
        return r

    measure(W_BLOCK, "torch-compile", block_steps, block_reps)
    loss = block_step()
    check(W_BLOCK, "torch-compile", loss.detach(), "block_loss", 1e-4, 1e-6)
    check(W_BLOCK, "torch-compile", torch.cat([bp[k].grad.reshape(-1) for k, _ in BLOCK]), "block_grads", 1e-3, 1e-5)

    def conv_loss(p, x):
        y = F.conv2d(torch.relu(F.conv2d(x, p["w1"], p["b1"], padding=1)), p["w2"], p["b2"], padding=1)
        return torch.mean(y * y)

    cp = {k: t(v.copy()).requires_grad_() for k, v in conv_params().items()}
    cx = t(load("conv_x"))
    cl = tc(conv_loss)

    def conv_step():
        for p in cp.values():
            p.grad = None
        loss = cl(cp, cx)
        loss.backward()
        return loss

    def conv_steps():
        for _ in range(3):
            r = conv_step()
        return r

    measure(W_CONV, "torch-compile", conv_steps, 3)
    loss = conv_step()
    check(W_CONV, "torch-compile", loss.detach(), "conv_loss", 1e-4, 1e-6)
    check(W_CONV, "torch-compile", torch.cat([cp[k].grad.reshape(-1) for k, _ in CONV]), "conv_grads", 1e-3, 1e-5)

    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    fresh = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    compiled = tc(model)
    tbatches = [(t(a), t(b)) for a, b in digits_batches]

    def digits_epoch():
        for xb, yb in tbatches:
            opt.zero_grad()
            loss = F.cross_entropy(compiled(xb), yb)
            loss.backward()
            opt.step()
        return loss

    measure(W_DIGITS, "torch-compile", digits_epoch)
    model.load_state_dict(fresh)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    torch.set_flush_denormal(True)
    measure(W_DIGITS_FTZ, "torch-compile", digits_epoch)
    torch.set_flush_denormal(False)

    def window_loss(wx, wh, bh, wy, by, xs, ys):
        h = torch.zeros(xs.shape[1], wh.shape[0])
        total = torch.zeros(())
        for i in range(xs.shape[0]):
            h = torch.tanh(F.one_hot(xs[i], wx.shape[0]).float() @ wx + h @ wh + bh)
            total = total - (F.one_hot(ys[i], wy.shape[1]).float() * torch.log_softmax(h @ wy + by, dim=1)).sum()
        return total / (xs.shape[0] * xs.shape[1])

    if quick:   # its 32 unrolled steps and their backward take inductor 1-2 minutes and GBs of memory
        print("torch-compile char-RNN: left out of the quick run", file=sys.stderr)
        return
    params = [t(p.copy()).requires_grad_() for p in crnn_init]
    copt = torch.optim.Adam(params, lr=0.01)
    wl = tc(window_loss)
    rxs, rys = t(crnn_xs), t(crnn_ys)

    def crnn_steps():
        for _ in range(20):
            copt.zero_grad()
            loss = wl(*params, rxs, rys)
            loss.backward()
            copt.step()
        return loss

    measure(W_CRNN, "torch-compile", crnn_steps, 20)


def cnn_jax():
    """The CNN training step of workloads.tsl section 11 under jax.jit: value_and_grad and Adam in
    one jitted step, from TSL's initial weights and batch; losses and weights checked against TSL's."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv(x, w, b):
        return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                        dimension_numbers=("NCHW", "OIHW", "NCHW")) + b[None, :, None, None]

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss_fn(p, x, y):
        h = pool(jax.nn.relu(conv(x, p[0], p[1])))
        h = pool(jax.nn.relu(conv(h, p[2], p[3])))
        logits = h.reshape(h.shape[0], 128) @ p[4] + p[5]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits, axis=1), y[:, None], axis=1))

    step = adam_train_step(loss_fn, 0.01)

    x, y = jnp.asarray(load("cnn_x")), jnp.asarray(load("cnn_y"))

    def train(st, n):
        losses = []
        for _ in range(n):
            st[0], st[1], loss = step(st[0], st[1], x, y)
            losses.append(loss)
        return losses

    def fresh():
        params = [jnp.asarray(w) for w in cnn_params()]
        return [params, adam_init(params)]

    st = fresh()   # timed first, so that its first call is the compilation
    measure(W_CNN, "jax-jit", lambda: train(st, CNN_STEPS)[-1], CNN_STEPS)
    st = fresh()
    check(W_CNN, "jax-jit", np.array(train(st, load("cnn_losses").size)), "cnn_losses", 1e-4, 1e-6)
    check(W_CNN, "jax-jit", np.concatenate([np.ravel(p) for p in st[0]]), "cnn_params", 1e-3, 1e-5)


def cnn_torch():
    """The CNN training step of workloads.tsl section 11 under torch.compile: the forward pass and
    the loss compiled (autograd's backward graph with them), and torch.optim.Adam's step compiled
    apart, as PyTorch's recipe for compiling an optimizer; losses and weights checked against TSL's."""
    torch = import_torch()
    F = torch.nn.functional

    def loss_fn(p, x, y):
        h = F.max_pool2d(torch.relu(F.conv2d(x, p[0], p[1], padding=1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, p[2], p[3], padding=1)), 2)
        return F.cross_entropy(h.reshape(h.shape[0], 128) @ p[4] + p[5], y)

    x, y = torch.from_numpy(load("cnn_x")), torch.from_numpy(load("cnn_y"))
    compiled_loss = tc(loss_fn)

    def setup():
        params = [torch.from_numpy(w).requires_grad_() for w in cnn_params()]
        opt = torch.optim.Adam(params, lr=0.01)
        return params, tc(lambda: opt.step()), opt

    def train(params, opt_step, opt, n):
        losses = []
        for _ in range(n):
            opt.zero_grad()
            loss = compiled_loss(params, x, y)
            loss.backward()
            opt_step()
            losses.append(loss.detach())
        return torch.stack(losses)

    params, opt_step, opt = setup()   # timed first, so that its first call is the compilation
    measure(W_CNN, "torch-compile", lambda: train(params, opt_step, opt, CNN_STEPS), CNN_STEPS)
    params, opt_step, opt = setup()
    check(W_CNN, "torch-compile", train(params, opt_step, opt, load("cnn_losses").size), "cnn_losses", 1e-4, 1e-6)
    check(W_CNN, "torch-compile", torch.cat([p.detach().reshape(-1) for p in params]), "cnn_params", 1e-3, 1e-5)


# Each runner with the workloads it measures: with only=TEXT a runner runs only when one of its
# workloads matches (and then measures and checks only those: peerlib), so a filtered run leaves
# out the other groups' compilation.
OLD = [W_GELU, W_RNN, W_MLP % 1, W_MLP % 64, W_MLP % 256, W_SOFTMAX, W_LN, W_BLOCK, W_CONV, W_DIGITS, W_CRNN]
runners = [("jax", run_jax, OLD), ("torch", run_torch, OLD)]
if not threads2:
    runners += [("jax", cnn_jax, [W_CNN]), ("torch", cnn_torch, [W_CNN])]
for name, run, workloads in runners:
    if not any(peerlib.wanted(w) for w in workloads):
        continue
    try:
        run()
    except ImportError as e:
        print("%s not available: %s" % (name, e), file=sys.stderr)
peerlib.finish("compiled.py")
