#!/usr/bin/env python3
"""peers.py - the Python side of `make bench`: CPython, NumPy and PyTorch on the same
workloads as workloads.tsl, one thread, warm-up of at least 1 s, median of the repetitions
(peerlib.py). Prints JSON lines like workloads.tsl. Usage: peers.py [CHECKDIR] [quick]
With CHECKDIR (the .npy files of workloads.tsl), softmax, layernorm, the transformer blocks, the
convolutions and the CNN training step run on TSL's inputs and their outputs are checked against
TSL's; a mismatch makes the exit status 1. only=TEXT: only the workloads whose name contains TEXT."""
import sys, time
import peerlib
from peerlib import measure, check, load, wanted, W_CNN, CNN_STEPS, cnn_params

peerlib.setup(sys.argv[1:])
quick = peerlib.quick

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def loop():
    s = 0.0
    for i in range(3000000):
        s = s + 1.5
    return s

measure("fib(27)", "cpython", lambda: fib(27))
measure("loop 3M float adds", "cpython", loop)

try:
    import numpy as np
except ImportError:
    np = None
    print("numpy not available", file=sys.stderr)

n_gelu = 1000000 if quick else 4000000
steps = 2000 if quick else 10000
passes = 100 if quick else 1000

if np is not None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000000, dtype=np.float32)
    b = rng.standard_normal(1000000, dtype=np.float32)
    measure("add 1M f32", "numpy", lambda: a + b)
    measure("mul 1M f32", "numpy", lambda: a * b)
    measure("exp 1M f32", "numpy", lambda: np.exp(a))
    measure("tanh 1M f32", "numpy", lambda: np.tanh(a))
    measure("sum 1M f32", "numpy", lambda: a.sum())
    measure("max 1M f32", "numpy", lambda: a.max())
    m1 = rng.standard_normal((512, 512), dtype=np.float32)
    m2 = rng.standard_normal((512, 512), dtype=np.float32)
    measure("matmul 512x512", "numpy", lambda: m1 @ m2)
    x = rng.standard_normal(n_gelu, dtype=np.float32)
    gelu = lambda x: 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x * x * x)))
    measure("tanh-GELU %dM" % (n_gelu // 1000000), "numpy", lambda: gelu(x))
    W = (rng.standard_normal((16, 16), dtype=np.float32) * np.float32(0.1))
    xs = rng.standard_normal((steps, 16), dtype=np.float32)
    def rnn():
        h = np.zeros((1, 16), np.float32)
        for t in range(steps):
            h = np.tanh(h @ W + xs[t])
        return h
    measure("RNN cell 16 x %d" % steps, "numpy", rnn)
    k = 1 / np.sqrt(512)
    def lin(i, o):
        k = np.float32(1 / np.sqrt(i))
        return (rng.uniform(-k, k, (i, o)).astype(np.float32), rng.uniform(-k, k, o).astype(np.float32))
    layers = [lin(512, 512) for _ in range(42)] + [lin(512, 256), lin(256, 128), lin(128, 2)]
    def mlp_np():
        for _ in range(passes):
            h = rng.standard_normal((1, 512), dtype=np.float32)
            for j, (w, bb) in enumerate(layers):
                h = h @ w + bb
                if j in (42, 43):
                    h = np.maximum(h, 0)
    measure("MLP 45 layers, batch 1 (per pass)", "numpy", mlp_np, passes)
    for batch in (64, 256):
        bpasses = (640 if quick else 2560) // batch
        xb = rng.standard_normal((batch, 512), dtype=np.float32)
        def mlp_batch():
            for _ in range(bpasses):
                h = xb
                for j, (w, bb) in enumerate(layers):
                    h = h @ w + bb
                    if j in (42, 43):
                        h = np.maximum(h, 0)
        measure("MLP 45 layers, batch %d (per pass)" % batch, "numpy", mlp_batch, bpasses)
    if peerlib.checkdir:
        sx, sg, sb = load("norm_x"), load("norm_g"), load("norm_b")
        def softmax_np(x):
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        def layernorm_np(x, g, b):
            d = x - x.mean(axis=-1, keepdims=True)
            return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + np.float32(1e-5)) * g + b
        measure("softmax [256, 1024] rows", "numpy", lambda: softmax_np(sx))
        check("softmax [256, 1024] rows", "numpy", softmax_np(sx), "softmax_y", 1e-4, 1e-7)
        measure("layernorm [256, 1024] rows", "numpy", lambda: layernorm_np(sx, sg, sb))
        check("layernorm [256, 1024] rows", "numpy", layernorm_np(sx, sg, sb), "layernorm_y", 1e-4, 1e-4)

try:
    import torch
except ImportError:
    torch = None
    print("torch not available", file=sys.stderr)

if torch is not None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    with torch.no_grad():
        x = torch.randn(n_gelu)
        gelu = lambda x: 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
        measure("tanh-GELU %dM" % (n_gelu // 1000000), "torch-eager", lambda: gelu(x))
        W = torch.randn(16, 16) * 0.1
        xs = torch.randn(steps, 16)
        def rnn_t(W, xs):
            h = torch.zeros(1, 16)
            for t in range(xs.shape[0]):
                h = torch.tanh(h @ W + xs[t])
            return h
        measure("RNN cell 16 x %d" % steps, "torch-eager", lambda: rnn_t(W, xs))
        rnn_s = torch.jit.script(rnn_t)
        measure("RNN cell 16 x %d" % steps, "torch-jit-script", lambda: rnn_s(W, xs))
        mods = [torch.nn.Linear(512, 512) for _ in range(42)]
        mods += [torch.nn.Linear(512, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128), torch.nn.ReLU(),
                 torch.nn.Linear(128, 2)]
        net = torch.nn.Sequential(*mods).eval()
        def mlp_t(model):
            for _ in range(passes):
                model(torch.randn(1, 512))
        measure("MLP 45 layers, batch 1 (per pass)", "torch-eager", lambda: mlp_t(net), passes)
        t0 = time.perf_counter()
        traced = torch.jit.freeze(torch.jit.trace(net, torch.randn(1, 512)))
        measure("MLP 45 layers, batch 1 (per pass)", "torch-jit-trace-freeze", lambda: mlp_t(traced), passes,
                compile_ms=(time.perf_counter() - t0) * 1000)
        if peerlib.checkdir:
            sx, sg, sb = (torch.from_numpy(load(n)) for n in ("norm_x", "norm_g", "norm_b"))
            measure("softmax [256, 1024] rows", "torch-eager", lambda: torch.softmax(sx, dim=-1))
            check("softmax [256, 1024] rows", "torch-eager", torch.softmax(sx, dim=-1), "softmax_y", 1e-4, 1e-7)
            ln = lambda: torch.nn.functional.layer_norm(sx, (1024,), sg, sb, 1e-5)
            measure("layernorm [256, 1024] rows", "torch-eager", ln)
            check("layernorm [256, 1024] rows", "torch-eager", ln(), "layernorm_y", 1e-4, 1e-4)

# the transformer block of workloads.tsl section 9, forward and backward by autograd (steps_of also
# serves section 9b's block below)
W_NBLK = "transformer block T=128 D=128 4 heads (nn), forward + backward"
if torch is not None and peerlib.checkdir and (wanted("transformer block T=128 D=128, forward + backward") or wanted(W_NBLK)):
    def block_loss(p, x):
        F = torch.nn.functional
        h = F.layer_norm(x, (128,), p["g1"], p["c1"], 1e-5)
        a = torch.softmax((h @ p["wq"]) @ (h @ p["wk"]).T / 128 ** 0.5, dim=-1)
        x = x + (a @ (h @ p["wv"])) @ p["wo"]
        h = F.layer_norm(x, (128,), p["g2"], p["c2"], 1e-5)
        u = h @ p["w1"] + p["b1"]
        y = x + (0.5 * u * (1 + torch.tanh(0.7978845608 * (u + 0.044715 * u * u * u)))) @ p["w2"] + p["b2"]
        return torch.mean(y * y)

    bp = {k: torch.from_numpy(v.copy()).requires_grad_() for k, v in peerlib.block_params().items()}
    bx = torch.from_numpy(load("block_x"))
    block_reps = 3 if quick else 10
    def steps_of(loss_fn, params):
        """block_reps forward and backward passes of loss_fn(params, bx); the last loss."""
        def steps():
            for _ in range(block_reps):
                for p in params.values():
                    p.grad = None
                loss = loss_fn(params, bx)
                loss.backward()
            return loss
        return steps
    block_steps = steps_of(block_loss, bp)
    name = "transformer block T=128 D=128, forward + backward"
    measure(name, "torch-eager", block_steps, block_reps)
    check(name, "torch-eager", block_steps().detach(), "block_loss", 1e-4, 1e-6)
    check(name, "torch-eager", torch.cat([bp[k].grad.reshape(-1) for k, _ in peerlib.BLOCK]), "block_grads", 1e-3, 1e-5)

# the two convolutions of workloads.tsl section 10, forward and backward by autograd
if torch is not None and peerlib.checkdir and wanted("conv2d 3-16-32 32x32 batch 32, forward + backward"):
    flat = load("conv_params")
    cp, at = {}, 0
    for k, shape in (("w1", (16, 3, 3, 3)), ("b1", (16,)), ("w2", (32, 16, 3, 3)), ("b2", (32,))):
        n = int(np.prod(shape))
        cp[k] = torch.from_numpy(flat[at:at + n].reshape(shape).copy()).requires_grad_()
        at += n
    cx = torch.from_numpy(load("conv_x"))
    def conv_steps(reps=3):
        F = torch.nn.functional
        for _ in range(reps):
            for p in cp.values():
                p.grad = None
            y = F.conv2d(torch.relu(F.conv2d(cx, cp["w1"], cp["b1"], padding=1)), cp["w2"], cp["b2"], padding=1)
            loss = torch.mean(y * y)
            loss.backward()
        return loss
    name = "conv2d 3-16-32 32x32 batch 32, forward + backward"
    measure(name, "torch-eager", conv_steps, 3)
    check(name, "torch-eager", conv_steps().detach(), "conv_loss", 1e-4, 1e-6)
    check(name, "torch-eager", torch.cat([cp[k].grad.reshape(-1) for k in ("w1", "b1", "w2", "b2")]), "conv_grads", 1e-3, 1e-5)

# the same block as nn.transformer_block(128, 4 heads) (workloads.tsl section 9b), from its saved
# parameters: F.scaled_dot_product_attention over the 4 heads, weights stored [in, out] as nn.linear
def sdpa(q, k, v):
    """F.scaled_dot_product_attention, written out where this torch lacks it (Debian's 1.13)."""
    F = torch.nn.functional
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v)
    return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v

if torch is not None and peerlib.checkdir and wanted(W_NBLK):
    nb = {k: torch.from_numpy(load("nblk_" + k).copy()).requires_grad_() for k in
          ("ln1_w", "ln1_b", "in_w", "in_b", "out_w", "out_b", "ln2_w", "ln2_b", "w1", "b1", "w2", "b2")}
    def nblock_loss(p, x):
        F = torch.nn.functional
        h = F.layer_norm(x, (128,), p["ln1_w"], p["ln1_b"], 1e-5)
        q, k, v = (h @ p["in_w"].T + p["in_b"]).reshape(128, 3, 4, 32).permute(1, 2, 0, 3)
        x = x + sdpa(q, k, v).permute(1, 0, 2).reshape(128, 128) @ p["out_w"] + p["out_b"]
        h = F.layer_norm(x, (128,), p["ln2_w"], p["ln2_b"], 1e-5)
        y = x + F.gelu(h @ p["w1"] + p["b1"], approximate="tanh") @ p["w2"] + p["b2"]
        return torch.mean(y * y)
    nblock_steps = steps_of(nblock_loss, nb)
    name = "transformer block T=128 D=128 4 heads (nn), forward + backward"
    measure(name, "torch-eager", nblock_steps, block_reps)
    check(name, "torch-eager", nblock_steps().detach(), "nblk_loss", 1e-4, 1e-6)
    check(name, "torch-eager", nb["in_w"].grad, "nblk_gin", 1e-3, 1e-5)

# training (issue 12): the digits MLP epoch and the char-RNN step of workloads.tsl section 8,
# with autograd and torch.optim.Adam. torch-jit-script scripts the model (digits) or the loss
# function with its time loop (char-RNN); torch.compile where this torch has it (2.0 and later).
if torch is not None and np is not None and (wanted("digits MLP 64-128-10, one epoch (45 steps of batch 32)") or
                                            wanted("char-RNN step, 32 time steps x 16 windows (per step)")):
    torch.manual_seed(0)
    digits = np.loadtxt("examples/data/digits.csv", delimiter=",", dtype=np.float32)
    digits = digits[np.random.default_rng(0).permutation(len(digits))]
    dx = torch.from_numpy(digits[:1437, :64] / 16)
    dy = torch.from_numpy(digits[:1437, 64].astype(np.int64))
    batches = [(dx[s:s + 32], dy[s:s + 32]) for s in range(0, 1437, 32)]

    def digits_setup():
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
        return model, torch.optim.Adam(model.parameters(), lr=0.02)

    def digits_epoch(model, opt):
        for xb, yb in batches:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()

    name = "digits MLP 64-128-10, one epoch (45 steps of batch 32)"
    model, opt = digits_setup()
    measure(name, "torch-eager", lambda: digits_epoch(model, opt))
    model, opt = digits_setup()
    scripted = torch.jit.script(model)
    measure(name, "torch-jit-script", lambda: digits_epoch(scripted, opt))
    if hasattr(torch, "compile"):
        try:
            model, opt = digits_setup()
            compiled = torch.compile(model)
            measure(name, "torch-compile", lambda: digits_epoch(compiled, opt))
        except Exception as e:
            print("torch.compile failed: %s" % e, file=sys.stderr)
    else:
        print("torch %s has no torch.compile: no torch-compile rows" % torch.__version__, file=sys.stderr)

    V, H, T, B = 38, 64, 32, 16
    def rnn_params():
        return [(torch.randn(V, H) / V ** 0.5).requires_grad_(), (torch.randn(H, H) * (0.5 / H ** 0.5)).requires_grad_(),
                torch.zeros(H, requires_grad=True), (torch.randn(H, V) / H ** 0.5).requires_grad_(),
                torch.zeros(V, requires_grad=True)]

    def window_loss(wx, wh, bh, wy, by, xs, ys):
        h = torch.zeros(xs.shape[1], wh.shape[0])
        total = torch.zeros(())
        for t in range(xs.shape[0]):
            h = torch.tanh(torch.nn.functional.one_hot(xs[t], wx.shape[0]).float() @ wx + h @ wh + bh)
            total = total - (torch.nn.functional.one_hot(ys[t], wy.shape[1]).float()
                             * torch.log_softmax(h @ wy + by, dim=1)).sum()
        return total / (xs.shape[0] * xs.shape[1])

    rxs = torch.randint(0, V, (T, B))
    rys = torch.randint(0, V, (T, B))
    def rnn_steps(loss_fn, params, opt, n=20):
        for _ in range(n):
            opt.zero_grad()
            loss_fn(*params, rxs, rys).backward()
            opt.step()

    name = "char-RNN step, 32 time steps x 16 windows (per step)"
    params = rnn_params()
    opt = torch.optim.Adam(params, lr=0.01)
    measure(name, "torch-eager", lambda: rnn_steps(window_loss, params, opt), 20)
    params = rnn_params()
    opt = torch.optim.Adam(params, lr=0.01)
    window_loss_s = torch.jit.script(window_loss)
    measure(name, "torch-jit-script", lambda: rnn_steps(window_loss_s, params, opt), 20)
# the CNN training step of workloads.tsl section 11 (examples/cnn_digits.tsl's model): from TSL's
# initial weights and batch, autograd and torch.optim.Adam (lr 0.01); the losses of the first
# steps and the weights after them are checked against TSL's
if torch is not None and peerlib.checkdir and wanted(W_CNN):
    def cnn_loss(p, x, y):
        F = torch.nn.functional
        h = F.max_pool2d(torch.relu(F.conv2d(x, p[0], p[1], padding=1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, p[2], p[3], padding=1)), 2)
        return F.cross_entropy(h.reshape(h.shape[0], 128) @ p[4] + p[5], y)

    cnn_x, cnn_y = torch.from_numpy(load("cnn_x")), torch.from_numpy(load("cnn_y"))
    def cnn_setup():
        params = [torch.from_numpy(w).requires_grad_() for w in cnn_params()]
        return params, torch.optim.Adam(params, lr=0.01)
    def cnn_train(params, opt, n):
        losses = []
        for _ in range(n):
            opt.zero_grad()
            loss = cnn_loss(params, cnn_x, cnn_y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses)
    params, opt = cnn_setup()
    check(W_CNN, "torch-eager", cnn_train(params, opt, load("cnn_losses").size), "cnn_losses", 1e-4, 1e-6)
    check(W_CNN, "torch-eager", torch.cat([p.detach().reshape(-1) for p in params]), "cnn_params", 1e-3, 1e-5)
    params, opt = cnn_setup()
    measure(W_CNN, "torch-eager", lambda: cnn_train(params, opt, CNN_STEPS), CNN_STEPS)
peerlib.finish("peers.py")
