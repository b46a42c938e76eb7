#!/bin/sh
# parity.sh TSL [OUTDIR] - CPU/GPU parity of every op the GPU covers, generated from the op
# table (ops/ops.def), on a machine with a GPU (make gpu-check runs it; without a GPU it says
# so and exits 0). For each op, dtype and calling form a script computes the op on the CPU
# and on the GPU and compares: bit for bit (equal) where the result is exact on both (the
# arithmetic, comparisons, rounding, min/max, bit ops, conversions, copies, integer results,
# Philox uniform and integer draws), within relative 1e-5 otherwise (transcendental
# functions, reductions and matmul, whose summation order differs from the CPU's). The
# cases of one op run in one process; when any of them fails, each runs in its own process,
# so a sticky CUDA error cannot hide or cascade into the others.
# A script the CPU itself refuses (an op not defined for the dtype) is skipped; a GPU answer
# "NAME() is not supported on device 'gpu'" is listed as not covered; anything else that
# differs or fails is a failure. OUTDIR keeps the scripts (for compute-sanitizer) and a
# all.tsl with the first case of each op (for compute-sanitizer).
TSL=${1:-bin/tsl}
OUT=${2:-$(mktemp -d)}
mkdir -p "$OUT/cases"
cd "$(dirname "$0")/../.." || exit 1
printf 'x = to(zeros(1), "gpu")\n' >"$OUT/probe.tsl"
gpu=yes
"$TSL" "$OUT/probe.tsl" >/dev/null 2>"$OUT/probe.err" || gpu=no

# exact on both devices (IEEE-exact or integer); everything else is compared within 1e-5.
# NaN is compared by position (its sign and payload may differ: tests/gpu/same.tsl)
EXACT=" concat stack equal allclose clip where cumsum cumprod trace outer diff take scatter_add tile repeat one_hot neg abs relu floor ceil round sign isnan isinf isfinite logical_not bitwise_not add sub mul div
 floor_divide mod maximum minimum logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor
 eq ne lt le gt ge max min argmax argmin all any astype transpose broadcast_to reshape flatten
 expand_dims squeeze rand randint sort argsort topk unique pad full max_pool2d avg_pool2d adaptive_avg_pool2d
 max_pool2d_backward avg_pool2d_backward adaptive_avg_pool2d_backward layer_norm rms_norm group_norm batch_norm
 gather scatter masked_fill "
# integer matmul is exact too (the case names say the dtype)
exact_case() { case "$1 $2" in "matmul i64"*|"matmul bool"*|"dot i64"*|"dot bool"*) return 0 ;; esac; echo "$EXACT" | grep -q " $1 "; }

# the input of each dtype, kept inside every op's domain (no NaN: NaN bits may differ)
input() {   # input NAME DTYPE VAR SHAPE
    case "$1" in
    log|log2|log10|sqrt) f="rand($4) + 0.1" ;;
    acosh) f="rand($4) + 1.1" ;;
    pow) f="rand($4) + 0.5" ;;
    *) f="rand($4) * 1.8 - 0.9" ;;
    esac
    case "$2" in
    f32) echo "$3 = $f" ;;
    f64) echo "$3 = astype($f, \"f64\")" ;;
    i64) if [ "$3" = b ]; then echo "$3 = randint(1, 4, $4)"; else echo "$3 = randint(-5, 6, $4)"; fi ;;
    bool) echo "$3 = rand($4) > 0.5" ;;
    esac
}

n=0
: >"$OUT/index.txt"
# case_script NAME ID SETUP CPU_EXPR GPU_EXPR: writes one script
case_script() {
    n=$((n + 1))
    f="$OUT/cases/$(printf %04d $n)_$1_$2.tsl"
    printf '%s %s\n' "$1" "$f" >>"$OUT/index.txt"
    if exact_case "$1" "$2"; then exact=true; else exact=false; fi
    { printf 'seed(7)\n%s\nc = %s\n' "$3" "$4"
      printf 'seed(7)\n%s\n' "$3"
      printf 'device("gpu")\ng = to(%s, "cpu")\ndevice("cpu")\n' "$5"
      cat tests/gpu/same.tsl
      printf 'if not same(c, g, %s) { print(c); print(g); assert(false, "CPU and GPU differ") }\n' "$exact"
      printf 'print("ok")\n'; } >"$f"
}

# $1 the op's call on names that the GPU version rebinds to GPU copies
gpu_of() { echo "$1" | sed 's/\bx\b/to(x, "gpu")/g; s/\ba\b/to(a, "gpu")/g; s/\bb\b/to(b, "gpu")/g'; }

# elementwise ops, from ops.def: K_UNARY / K_BINARY / K_COMPARE rows, builtin or operator
grep '^OP(' ops/ops.def | sed 's/^OP(\([A-Z0-9_]*\), *"\([a-z0-9_]*\)", *"[^"]*", *[0-9], *\(K_[A-Z]*\), *\([^,]*\),.*, *\(NULL\|"[^"]*"\), *"[^"]*")$/\2 \3 \5 \4/' |
while read -r name kind sym flags; do
    case "$kind" in K_UNARY|K_BINARY|K_COMPARE) ;; *) continue ;; esac
    sym=$(echo "$sym" | tr -d '"')
    for dt in f32 f64 i64 bool; do
        if [ "$kind" = K_UNARY ]; then
            setup=$(input "$name" "$dt" x "[3, 5]")
            case "$flags" in *F_SYNTAX*) call="${sym}x" ;; *) call="$name(x)" ;; esac
            case_script "$name" "$dt" "$setup" "$call" "$(gpu_of "$call")"
            if [ "$name" = round ]; then
                case_script round "${dt}_decimals" "$setup" "round(x * 1000, 2)" "round(to(x, \"gpu\") * 1000, 2)"
                case_script round "${dt}_negative" "$setup" "round(x * 1000, -1)" "round(to(x, \"gpu\") * 1000, -1)"
                case_script round "${dt}_own_dtype" "$setup" "round(x, -1)" "round(to(x, \"gpu\"), -1)"
            fi
        else
            setup="$(input "$name" "$dt" a "[3, 5]")
$(input "$name" "$dt" b "[5]")"
            case "$flags" in *F_SYNTAX*) call="a $sym b"; num="a $sym 2" ;; *) call="$name(a, b)"; num="$name(a, 2)" ;; esac
            case_script "$name" "$dt" "$setup" "$call" "$(gpu_of "$call")"
            case_script "$name" "${dt}_number" "$setup" "$num" "$(gpu_of "$num")"
        fi
    done
done

# the other families the GPU covers
for r in sum mean max min prod argmax argmin all any var std norm logsumexp; do
    for dt in f32 f64 i64 bool; do
        setup=$(input "$r" "$dt" x "[4, 6, 5]")
        for ax in "" ", axis=1" ", axis=[1, 2]" ", axis=[0, 2]" ", axis=0, keepdims=true"; do
            case_script "$r" "$dt" "$setup" "$r(x$ax)" "$r(to(x, \"gpu\")$ax)"
        done
    done
done
for s in softmax log_softmax; do
    for dt in f32 f64; do
        case_script "$s" "$dt" "$(input x "$dt" x "[6, 33]")" "$s(x)" "$s(to(x, \"gpu\"))"
        case_script "$s" "${dt}_axis0" "$(input x "$dt" x "[6, 4, 3]")" "$s(x, axis=0)" "$s(to(x, \"gpu\"), axis=0)"
    done
done
for dt in f32 f64; do
    case_script matmul "$dt" "$(input x "$dt" a "[7, 9]")
$(input x "$dt" b "[9, 5]")" "a @ b" "to(a, \"gpu\") @ to(b, \"gpu\")"
    case_script matmul "${dt}_batched" "$(input x "$dt" a "[3, 7, 9]")
$(input x "$dt" b "[3, 9, 5]")" "a @ b" "to(a, \"gpu\") @ to(b, \"gpu\")"
    case_script matmul "${dt}_broadcast" "$(input x "$dt" a "[3, 7, 9]")
$(input x "$dt" b "[9, 5]")" "a @ b" "to(a, \"gpu\") @ to(b, \"gpu\")"
    case_script matmul "${dt}_transpose_a" "$(input x "$dt" a "[9, 7]")
$(input x "$dt" b "[9, 5]")" "matmul(a, b, transpose_a=true)" "matmul(to(a, \"gpu\"), to(b, \"gpu\"), transpose_a=true)"
done
# attention (the GPU composes it from matmul, where and softmax; the CPU runs its blocked
# kernel): plain, causal, a bool and a float mask, over batches; and einsum's lowered ops
for dt in f32 f64; do
    qkv="$(input x "$dt" a "[2, 3, 7, 8]")
$(input x "$dt" b "[2, 3, 9, 8]")
$(input x "$dt" x "[2, 3, 9, 5]")"
    k=0
    for form in "" ", causal=true" ", mask=rand([7, 9]) > 0.3" ", mask=rand([3, 7, 9])"; do
        k=$((k + 1))
        id="${dt}_$(echo "plain causal boolmask floatmask" | cut -d' ' -f$k)"
        case_script scaled_dot_product_attention "$id" "$qkv" "scaled_dot_product_attention(a, b, x$form)" \
            "scaled_dot_product_attention(to(a, \"gpu\"), to(b, \"gpu\"), to(x, \"gpu\")$form)"
    done
    case_script einsum "$dt" "$(input x "$dt" a "[2, 7, 9]")
$(input x "$dt" b "[9, 2, 5]")" "einsum(\"bij,jbk->bki\", a, b)" "einsum(\"bij,jbk->bki\", to(a, \"gpu\"), to(b, \"gpu\"))"
done
# nn_case DTYPE CALL: a case of CALL on the names below, the GPU's on GPU copies of them;
# grad(fn(q) { return sum(sin(OP(...))) })(...) is named OP_grad
g_all() { gpu_of "$1" | sed 's/\b\([wvmlijztkuser]\)\b/to(\1, "gpu")/g'; }
nn_case() { name=$(echo "$2" | sed 's/(.*//'); case "$2" in grad*) name="$(echo "$2" | sed 's/^grad(fn(q) { return sum(sin(\([a-z0-9_]*\)(.*/\1/')_grad" ;; esac
    case_script "$name" "${1}_$(echo "$2" | tr -c 'a-z0-9' '_' | cut -c1-60)" "$setup" "$2" "$(g_all "$2")"; }
# convolutions (im2col and cuBLAS: within 1e-5) and pools (the CPU's order: exact), forward,
# their gradient rows called directly, and gradients through grad() (x's: conv_transpose2d
# and the *_backward rows; w's: conv2d_weight_grad; a bias's: a sum)
for dt in f32 f64; do
    setup="$(input x "$dt" x "[2, 4, 7, 6]")
$(input x "$dt" a "[6, 2, 3, 2]")
$(input x "$dt" b "[6]")
$(input x "$dt" t "[4, 3, 3, 3]")
$(input x "$dt" k "[5, 4, 2, 3]")
$(input x "$dt" u "[2, 6, 4, 4]")
$(input x "$dt" s "[2, 4, 9]")
$(input x "$dt" e "[3, 4, 1, 1]")
r = round(x * 3)"   # r: ties for max_pool2d's first largest element
    for call in "conv2d(x, a, b, stride=[2, 1], padding=1, dilation=[1, 2], groups=2)" "conv2d(x, k, padding=\"same\")" \
        "conv2d(x, e)" "conv2d(x, k, stride=3, padding=[2, 0])" "conv1d(s, reshape(k, [5, 4, 6]), nil, stride=2, padding=1)" \
        "conv_transpose2d(x, t, b[0:6], stride=2, padding=1, output_padding=1, groups=2)" \
        "conv_transpose2d(x, t, nil, stride=[1, 2], dilation=2)" \
        "conv2d_weight_grad(x, u, [3, 2], stride=2, padding=1, groups=2)" \
        "grad(fn(q) { return sum(sin(conv2d(q, a, b, stride=2, padding=1, groups=2))) })(x)" \
        "grad(fn(q) { return sum(sin(conv2d(x, q, b, stride=2, padding=1, groups=2))) })(a)" \
        "grad(fn(q) { return sum(sin(conv2d(x, a, q, stride=2, padding=1, groups=2))) })(b)" \
        "grad(fn(q) { return sum(sin(conv_transpose2d(q, t, nil, stride=2, padding=1))) })(x)" \
        "grad(fn(q) { return sum(sin(conv_transpose2d(x, q, nil, stride=2, padding=1))) })(t)" \
        "max_pool2d(x, 3, stride=2, padding=1)" "max_pool2d(r, 2)" "avg_pool2d(x, [2, 3], stride=[1, 2], padding=1)" \
        "avg_pool2d(x, 3)" "adaptive_avg_pool2d(x, [3, 4])" "adaptive_avg_pool2d(x, [5, 5])" \
        "max_pool2d_backward(x, u[:, 0:4, 0:4, 0:3], 3, stride=2, padding=1)" "max_pool2d_backward(r, u[:, 0:4, 0:3, 0:3], 2)" \
        "avg_pool2d_backward(x, u[:, 0:4, 0:4, 0:3], 3, stride=2, padding=1)" "adaptive_avg_pool2d_backward(x, u[:, 0:4, 0:3, 0:4])" \
        "grad(fn(q) { return sum(sin(max_pool2d(q, 3, stride=2, padding=1))) })(x)" \
        "grad(fn(q) { return sum(sin(avg_pool2d(q, [2, 3], stride=[1, 2], padding=1))) })(x)" \
        "grad(fn(q) { return sum(sin(adaptive_avg_pool2d(q, [3, 4]))) })(x)"; do
        nn_case "$dt" "$call"
    done
done
# the nn ops (the CPU's loops: the normalizations exact, softplus and cross_entropy within
# 1e-5 for the device's exp and log), forward and through grad(); gather, scatter and
# masked_fill in every dtype (exact), with indices and labels out of range refused by both
for dt in f32 f64; do
    setup="$(input x "$dt" x "[2, 4, 7, 6]")
$(input x "$dt" w "[6]")
$(input x "$dt" v "[4]")
$(input x "$dt" a "[4]")
$(input x "$dt" b "[5, 9]")
m = abs(a) + 0.5
l = randint(0, 9, [5])
z = tensor([0, 9, 2, 1, 3], \"i64\")"
    for call in "softplus(x)" "softplus(x * 30, beta=2, threshold=5)" "layer_norm(x, [6], w, w * 2)" "layer_norm(x, [7, 6])" \
        "rms_norm(x, [6], w)" "rms_norm(x, [7, 6], nil, eps=0.001)" "group_norm(x, 2, v, a)" "group_norm(x, 4)" \
        "batch_norm(x, a, m, v, a)" "batch_norm(x, nil, nil, v, a, training=true)" "batch_norm(x, a, m, training=true)" \
        "batch_norm(x, a, m)" "cross_entropy(b, l)" "cross_entropy(b, l, label_smoothing=0.1)" "cross_entropy(b, z)" \
        "grad(fn(q) { return sum(sin(softplus(q))) })(x)" "grad(fn(q) { return sum(sin(layer_norm(q, [6], w, w))) })(x)" \
        "grad(fn(q) { return sum(sin(layer_norm(x, [6], q, w))) })(w)" "grad(fn(q) { return sum(sin(rms_norm(q, [7, 6], nil))) })(x)" \
        "grad(fn(q) { return sum(sin(group_norm(q, 2, v, a))) })(x)" "grad(fn(q) { return sum(sin(batch_norm(q, nil, nil, v, a, training=true))) })(x)" \
        "grad(fn(q) { return sum(sin(cross_entropy(q, l, label_smoothing=0.2))) })(b)"; do
        nn_case "$dt" "$call"
    done
done
for dt in f32 f64 i64 bool; do
    setup="$(input x "$dt" x "[4, 5]")
$(input x "$dt" v "[3, 7]")
i = randint(0, 5, [3, 7])
j = randint(0, 4, [2, 5])
m = rand([5]) > 0.5
z = tensor([[0, 5]], \"i64\")"
    for call in "gather(x, 1, i)" "gather(x, 0, j)" "gather(x, -1, z)" "scatter(x, 1, i, v)" "scatter(x, 1, i, v, reduce=\"add\")" \
        "scatter(x, 0, j, v[0:2, 0:5])" "scatter(x, 1, z, v)" "masked_fill(x, m, 1)" "masked_fill(x, x > 0.3, v[0, 0])"; do
        nn_case "$dt" "$call"
    done
done
setup="$(input x f32 x "[3, 4]")"
nn_case f32 "grad(fn(q) { return sum(sin(gather(q, 1, tensor([[0, 0], [3, 1], [2, 2]], \"i64\")))) })(x)"
nn_case f32 "grad(fn(q) { return sum(sin(masked_fill(q, q > 0, 0.5))) })(x)"
# integer matmul (i64 wraps; bool computes in i64, then != 0), batches of any rank that
# broadcast against each other, transpose_a, vectors; floats through the same batch walk.
# i64 and bool are exact; floats within 1e-5 (cuBLAS's summation order is not OpenBLAS's)
for dt in i64 bool f32 f64; do
    for shapes in "[7, 9] [9, 5]" "[2, 3, 7, 9] [2, 3, 9, 5]" "[2, 1, 7, 9] [3, 9, 5]" "[4, 7, 9] [2, 1, 9, 5]" \
        "[9] [2, 3, 9, 5]" "[2, 3, 7, 9] [9]" "[9] [9]" "[0, 7, 9] [9, 5]" "[7, 0] [0, 5]" "[2, 2, 1, 3, 9] [1, 2, 3, 9, 4]"; do
        sa=${shapes%% \[*}; sb="[${shapes#* \[}"
        setup="$(input x "$dt" a "$sa")
$(input x "$dt" b "$sb")"
        case_script matmul "${dt}_$(echo "$shapes" | tr -c 'a-z0-9' '_')" "$setup" "a @ b" "to(a, \"gpu\") @ to(b, \"gpu\")"
    done
    setup="$(input x "$dt" a "[2, 1, 9, 7]")
$(input x "$dt" b "[3, 9, 5]")"
    case_script matmul "${dt}_transpose_a_broadcast" "$setup" "matmul(a, b, transpose_a=true)" "matmul(to(a, \"gpu\"), to(b, \"gpu\"), transpose_a=true)"
    case_script dot "${dt}_2d" "$(input x "$dt" a "[7, 9]")
$(input x "$dt" b "[9, 5]")" "dot(a, b)" "dot(to(a, \"gpu\"), to(b, \"gpu\"))"
    case_script dot "${dt}_number" "$(input x "$dt" a "[7, 9]")" "dot(a, 3)" "dot(to(a, \"gpu\"), 3)"
done
setup="a = randint(-5, 6, [4, 7, 9]) * 1000000000000
b = randint(-5, 6, [9, 5]) * 1000000000"   # i64 products that wrap
case_script matmul i64_wraps "$setup" "a @ b" "to(a, \"gpu\") @ to(b, \"gpu\")"
setup="$(input x i64 a "[3, 7, 9]")
$(input x bool b "[9, 5]")"
case_script matmul i64_bool "$setup" "a @ b" "to(a, \"gpu\") @ to(b, \"gpu\")"
case_script matmul i64_shape_mismatch "$setup" "b @ a" "to(b, \"gpu\") @ to(a, \"gpu\")"
case_script dot i64_rank3 "$setup" "dot(a, b)" "dot(to(a, \"gpu\"), to(b, \"gpu\"))"   # the CPU refuses: so must the GPU
for dt in f32 f64; do   # vectors, dot, mixed dtypes
    setup="$(input x "$dt" v "[9]")
$(input x "$dt" a "[7, 9]")
$(input x "$dt" b "[9, 5]")
$(input x f32 w "[9]")"
    for call in "v @ b" "a @ v" "v @ w" "dot(v, w)" "dot(a, b)" "dot(a, v)" "dot(v, 2)" "matmul(a, b.T.T)"; do
        case_script matmul "${dt}_$(echo "$call" | tr -c 'a-z0-9' '_')" "$setup" "$call" "$(gpu_of "$call" | sed 's/\bv\b/to(v, "gpu")/g; s/\bw\b/to(w, "gpu")/g')"
    done
done
for dt in f32 f64 i64 bool; do
    setup=$(input x "$dt" x "[2, 3, 4]")
    case_script transpose "$dt" "$setup" "transpose(x)" "transpose(to(x, \"gpu\"))"
    case_script transpose "${dt}_axes" "$setup" "transpose(x, [1, 0, 2])" "transpose(to(x, \"gpu\"), [1, 0, 2])"
    case_script broadcast_to "$dt" "$setup" "broadcast_to(x, [5, 2, 3, 4])" "broadcast_to(to(x, \"gpu\"), [5, 2, 3, 4])"
    case_script reshape "$dt" "$setup" "reshape(x, [4, -1])" "reshape(to(x, \"gpu\"), [4, -1])"
    for to_dt in f32 f64 i64 bool; do
        case_script astype "${dt}_$to_dt" "$setup" "astype(x, \"$to_dt\")" "astype(to(x, \"gpu\"), \"$to_dt\")"
    done
done
for dt in f32 f64 i64 bool; do
    setup="$(input x "$dt" a "[2, 3, 4]")
$(input x "$dt" b "[2, 5, 4]")"
    case_script concat "$dt" "$setup" "concat([a, b, a], axis=1)" "concat([to(a, \"gpu\"), to(b, \"gpu\"), to(a, \"gpu\")], axis=1)"
    case_script stack "$dt" "$setup" "stack([a, a], axis=2)" "stack([to(a, \"gpu\"), to(a, \"gpu\")], axis=2)"
    # equal and allclose answer a bool: tensor() makes it comparable
    case_script equal "$dt" "$setup" "tensor(equal(a, a))" "tensor(equal(to(a, \"gpu\"), to(a, \"gpu\")))"
    case_script equal "${dt}_differ" "$setup" "tensor(equal(a, b))" "tensor(equal(to(a, \"gpu\"), to(b, \"gpu\")))"
done
for dt in f32 f64 i64; do
    setup="$(input x "$dt" a "[3, 5]")
$(input x "$dt" b "[5]")"
    case_script clip "$dt" "$setup" "clip(a, -0.5, 0.5)" "clip(to(a, \"gpu\"), -0.5, 0.5)"
    case_script clip "${dt}_tensor_lo" "$setup" "clip(a, b, nil)" "clip(to(a, \"gpu\"), to(b, \"gpu\"), nil)"
    case_script where "$dt" "$setup" "where(a > b, a, b)" "where(to(a, \"gpu\") > to(b, \"gpu\"), to(a, \"gpu\"), to(b, \"gpu\"))"
    case_script where "${dt}_number" "$setup" "where(a > 0, a, 0)" "where(to(a, \"gpu\") > 0, to(a, \"gpu\"), 0)"
done
for dt in f32 f64 i64 bool; do
    setup=$(input x "$dt" x "[4, 6, 5]")
    for op in cumsum cumprod; do
        case_script "$op" "$dt" "$setup" "$op(x)" "$op(to(x, \"gpu\"))"
        case_script "$op" "${dt}_axis0" "$setup" "$op(x, axis=0)" "$op(to(x, \"gpu\"), axis=0)"
    done
    case_script trace "$dt" "$setup" "trace(x)" "trace(to(x, \"gpu\"))"
    case_script diff "$dt" "$setup" "diff(x)" "diff(to(x, \"gpu\"))"
    case_script diff "${dt}_axis1" "$setup" "diff(x, axis=1)" "diff(to(x, \"gpu\"), axis=1)"
    case_script trace "${dt}_2d" "$(input x "$dt" x "[5, 3]")" "trace(x)" "trace(to(x, \"gpu\"))"
    case_script tile "$dt" "$setup" "tile(x, [2, 1, 3])" "tile(to(x, \"gpu\"), [2, 1, 3])"
    case_script tile "${dt}_short_reps" "$setup" "tile(x, [2])" "tile(to(x, \"gpu\"), [2])"
    case_script repeat "$dt" "$setup" "repeat(x, 3)" "repeat(to(x, \"gpu\"), 3)"
    case_script repeat "${dt}_axis1" "$setup" "repeat(x, 2, axis=1)" "repeat(to(x, \"gpu\"), 2, axis=1)"
    setup="$(input x "$dt" a "[4]")
$(input x "$dt" b "[2, 3]")"
    case_script outer "$dt" "$setup" "outer(a, b)" "outer(to(a, \"gpu\"), to(b, \"gpu\"))"
done
case_script where bool "$(input x bool a "[3, 5]")" "where(a, a, true)" "where(to(a, \"gpu\"), to(a, \"gpu\"), true)"
case_script allclose f32 "$(input x f32 a "[3, 4]")" "tensor(allclose(a, a + 1e-7))" "tensor(allclose(to(a, \"gpu\"), to(a + 1e-7, \"gpu\")))"
for dt in f32 f64 i64 bool; do
    setup="$(input x "$dt" x "[4, 5]")
i = tensor([3, -1, 0, 19, 3, 7], \"i64\")
$(input x "$dt" v "[6]")"
    case_script take "$dt" "$setup" "take(x, i)" "take(to(x, \"gpu\"), to(i, \"gpu\"))"
    case_script take "${dt}_out_of_range" "$setup" "take(x, i + 20)" "take(to(x, \"gpu\"), to(i + 20, \"gpu\"))"
    case_script scatter_add "$dt" "$setup" "scatter_add(x, i, v)" "scatter_add(to(x, \"gpu\"), to(i, \"gpu\"), to(v, \"gpu\"))"
    case_script scatter_add "${dt}_number" "$setup" "scatter_add(x, i, 2)" "scatter_add(to(x, \"gpu\"), to(i, \"gpu\"), 2)"
done
setup='l = tensor([[3, 0], [1, 4]], "i64")'
case_script one_hot f32 "$setup" "one_hot(l, 5)" "one_hot(to(l, \"gpu\"), 5)"
case_script one_hot f32_out_of_range "$setup" "one_hot(l, 4)" "one_hot(to(l, \"gpu\"), 4)"
# ordering (sort, argsort, topk, unique: the CPU's stable order, NaN last, -0 tied with +0;
# i64 and bool inputs have many ties) and pad, every dtype, several axes
for dt in f32 f64 i64 bool; do
    setup="$(input x "$dt" x "[4, 6, 5]")
b = tensor(-2)"   # pad's value as a one-element tensor
    case "$dt" in f32|f64) setup="$setup
x = where(rand([4, 6, 5]) > 0.85, nan, where(x > 0.6, -0.0, where(x < -0.6, 0.0, x)))" ;; esac
    for call in "sort(x)" "sort(x, axis=0)" "sort(x, axis=1, descending=true)" "argsort(x)" "argsort(x, axis=0)" \
        "argsort(x, axis=1, descending=true)" "topk(x, 3)[0]" "topk(x, 3)[1]" "topk(x, 2, axis=1)[0]" \
        "topk(x, 2, axis=1)[1]" "topk(x, 4, axis=0)[1]" "topk(x, 0)[0]" "topk(x, 5)[1]" "unique(x)" \
        "unique(x[0, 0])" "pad(x, [[1, 2], [0, 1], [3, 0]])" "pad(x, [[1, 1]], 1)" "pad(x[0], [[2, 0], [1, 1]], b)" \
        "sort(x[0, 0, 0:0])" "unique(x[0, 0, 0:0])" "pad(x[0, 0, 0:0], [[2, 1]])"; do
        case_script "$(echo "$call" | sed 's/(.*//')" "${dt}_$(echo "$call" | tr -c 'a-z0-9' '_')" "$setup" "$call" "$(gpu_of "$call")"
    done
done
setup="$(input x f32 x "[300]")
x = concat([x, x, -x, round(x)])"   # one long line: several stages of the network, many ties
for call in "sort(x)" "argsort(x, descending=true)" "topk(x, 40)[1]" "unique(x)"; do
    case_script "$(echo "$call" | sed 's/(.*//')" "long_$(echo "$call" | tr -c 'a-z0-9' '_')" "$setup" "$call" "$(gpu_of "$call")"
done
# full with a tensor as its value (autograd's zeros_like makes these): the GPU's own
for dt in f32 f64 i64 bool; do
    setup=$(input x "$dt" x "[3, 4]")
    for call in "full([2, 3], x[0, 0])" "full([2, 3], x[1, 2], \"i64\")" "full([2, 0], x[0, 1])" "full([4], x[0, 0], \"bool\")"; do
        case_script full "${dt}_$(echo "$call" | tr -c 'a-z0-9' '_')" "$setup" "$call" "$(gpu_of "$call")"
    done
done
case_script full f32_nan_to_i64 "x = tensor([nan])" "full([2], x[0], \"i64\")" "full([2], to(x, \"gpu\")[0], \"i64\")"
# pad's fill values the CPU refuses for an i64 tensor: the GPU refuses them too
setup="$(input x i64 x "[3, 4]")"
case_script pad i64_fraction "$setup" "pad(x, [[1, 1]], 0.5)" "pad(to(x, \"gpu\"), [[1, 1]], 0.5)"
case_script pad i64_nan "$setup" "pad(x, [[1, 1]], nan)" "pad(to(x, \"gpu\"), [[1, 1]], nan)"
case_script topk i64_k_too_large "$setup" "topk(x, 5)[0]" "topk(to(x, \"gpu\"), 5)[0]"
# an integer tensor compared with a number that is not an integer, NaN or past i64's range
# (the CPU compares exactly: no rounding of the number), the number on either side
for dt in i64 bool; do
    setup="$(input x "$dt" a "[3, 5]")"
    for op in "==" "!=" "<" "<=" ">" ">="; do
        name=$(case "$op" in "==") echo eq ;; "!=") echo ne ;; "<") echo lt ;; "<=") echo le ;; ">") echo gt ;; *) echo ge ;; esac)
        for x in 2.5 -2.5 0.5 nan 1e19 -1e19 inf; do
            case_script "$name" "${dt}_vs_$(echo "$x" | tr -c 'a-z0-9' '_')" "$setup" "a $op $x" "to(a, \"gpu\") $op $x"
        done
        case_script "$name" "${dt}_number_left" "$setup" "-0.5 $op a" "-0.5 $op to(a, \"gpu\")"
    done
done
# linear algebra (cuSOLVER on the GPU, LAPACK on the CPU): within relative 1e-5, on
# well-conditioned matrices (the routines' summation orders differ). Neither side normalizes
# signs, so qr compares abs(q) and abs(r), svd and eigh their values and the reconstructions
# u * s @ vt and vecs * vals @ vecs.T (sign-free); i64 computes in f32 as on the CPU.
lin_fns='fn usv(r) { return (r[0] * expand_dims(r[1], -2)) @ r[2] }
fn vlv(r) { return (r[1] * expand_dims(r[0], -2)) @ transpose(r[1], [0, 2, 1]) }'
lin_gpu() { gpu_of "$1" | sed 's/\bs\b/to(s, "gpu")/g; s/\bv\b/to(v, "gpu")/g; s/\bw\b/to(w, "gpu")/g'; }
for dt in f32 f64 i64; do
    setup="$(input x "$dt" x "[2, 5, 5]")
$(input x "$dt" b "[3, 1, 5, 2]")
$(input x "$dt" v "[3, 4, 6]")
$(input x "$dt" w "[2, 6, 4]")
a = x + astype(eye(5) * 30, x.dtype)
s = astype(a @ transpose(a, [0, 2, 1]), \"f64\")
$lin_fns"
    for call in "solve(a, b)" "solve(a[0], b[0, 0])" "solve(a, b[0, 0, :, 0])" "inv(a)" "det(a)" "det(x)" "cholesky(s)" \
        "abs(qr(x)[0])" "abs(qr(x)[1])" "abs(qr(v)[0])" "abs(qr(v)[1])" "abs(qr(w)[0])" "abs(qr(w)[1])" \
        "svd(x)[1]" "svd(v)[1]" "svd(w)[1]" "usv(svd(x))" "usv(svd(v))" "usv(svd(w))" \
        "eigh(s)[0]" "vlv(eigh(s))" "inv(x[:, 0:0, 0:0])" "det(x[:, 0:0, 0:0])"; do
        case_script "$(echo "$call" | sed 's/^abs(//; s/^usv(//; s/^vlv(//; s/(.*//')" "${dt}_$(echo "$call" | tr -c 'a-z0-9' '_')" \
            "$setup" "$call" "$(lin_gpu "$call")"
    done
done
# the CPU's errors on values: a singular matrix, one that is not positive definite (det of a
# singular matrix is 0, no error)
setup='a = tensor([[1.0, 2.0], [2.0, 4.0]])
b = tensor([1.0, 1.0])'
case_script solve singular "$setup" "solve(a, b)" "solve(to(a, \"gpu\"), to(b, \"gpu\"))"
case_script inv singular "$setup" "inv(a)" "inv(to(a, \"gpu\"))"
case_script inv singular_in_batch "$setup" "inv(stack([eye(2), a]))" "inv(to(stack([eye(2), a]), \"gpu\"))"
case_script det singular "$setup" "det(a)" "det(to(a, \"gpu\"))"
case_script cholesky not_positive_definite "a = tensor([[1.0, 2.0], [2.0, 1.0]])" "cholesky(a)" "cholesky(to(a, \"gpu\"))"
case_script svd nan "a = tensor([[1.0, nan], [2.0, 1.0]])" "svd(a)[1]" "svd(to(a, \"gpu\"))[1]"
case_script solve shape_mismatch "$setup" "solve(a, b[0:1])" "solve(to(a, \"gpu\"), to(b[0:1], \"gpu\"))"
# integer operands the CPU refuses: the GPU must refuse them too
setup="$(input x i64 a "[3, 5]")"
case_script mod i64_by_zero "$setup" "a % 0" "to(a, \"gpu\") % 0"
case_script floor_divide i64_by_zero "$setup" "floor_divide(a, 0)" "floor_divide(to(a, \"gpu\"), 0)"
case_script pow i64_negative "$setup" "a ** -1" "to(a, \"gpu\") ** -1"
# Philox: the same seed draws the same numbers on either device (the GPU draws on the device)
case_script rand f32 "" "rand([1000])" "rand([1000])"
case_script randn f32 "" "randn([1000])" "randn([1000])"
case_script randint i64 "" "randint(-50, 50, [1000])" "randint(-50, 50, [1000])"

# run the cases
pass=0 fail=0 skip=0
if [ $gpu = no ]; then
    # The scripts are still checked, with the CPU standing in for the GPU ("gpu" read as
    # "cpu"): each must run and agree with itself, or be refused by the CPU in both halves.
    for f in "$OUT"/cases/*.tsl; do
        sed 's/"gpu"/"cpu"/g' "$f" >"$OUT/cpu_as_gpu.tsl"
        sed '/^device("gpu")/,$d' "$f" >"$OUT/cpu_only.tsl"
        if "$TSL" "$OUT/cpu_as_gpu.tsl" >"$OUT/out" 2>"$OUT/err" && grep -q '^ok$' "$OUT/out"; then
            pass=$((pass + 1))
        elif ! "$TSL" "$OUT/cpu_only.tsl" >/dev/null 2>&1; then
            skip=$((skip + 1))
        else
            fail=$((fail + 1))
            echo "FAIL $(basename "$f"), with the CPU for the GPU:"; sed 's/^/    /' "$OUT/err" | head -6
        fi
    done
    echo "parity: no GPU here ($(head -1 "$OUT/probe.err" | sed 's/^.*error: //')); with the CPU for the GPU, $pass of $(ls "$OUT"/cases | wc -l) cases agree, $skip refused by the CPU, $fail broken"
    [ $fail -eq 0 ]
    exit
fi
: >"$OUT/not_covered.txt"
# one case on its own: pass, not covered (listed), or a failure (reported)
run_case() {
    base=$(basename "$1" .tsl)
    if timeout 60 "$TSL" "$1" >"$OUT/out" 2>"$OUT/err" && grep -q '^ok$' "$OUT/out"; then
        pass=$((pass + 1))
    elif grep -q "is not supported on device 'gpu'" "$OUT/err"; then
        echo "$base: $(grep -o "[a-z_0-9]*() is not supported on device 'gpu'" "$OUT/err" | head -1)" >>"$OUT/not_covered.txt"
    else
        fail=$((fail + 1))
        echo "FAIL $base:"; sed 's/^/    /' "$OUT/err" | head -8; sed 's/^/    /' "$OUT/out" | head -6
    fi
}
# The CPU half of each case alone first: what the CPU refuses is not a GPU question, except
# that the GPU must refuse it too.
mkdir -p "$OUT/groups"
: >"$OUT/all.tsl"
while read -r op f; do
    base=$(basename "$f" .tsl)
    sed '/^device("gpu")/,$d' "$f" >"$OUT/cpu_only.tsl"
    if ! "$TSL" "$OUT/cpu_only.tsl" >/dev/null 2>&1; then
        skip=$((skip + 1))
        sed 's/^c = .*/c = 0/' "$f" >"$OUT/gpu_only.tsl"
        if timeout 60 "$TSL" "$OUT/gpu_only.tsl" >/dev/null 2>&1; then fail=$((fail + 1)); echo "FAIL $base: the CPU refuses it, the GPU does not"; fi
        continue
    fi
    cat "$f" >>"$OUT/groups/$op.tsl"
    echo "$f" >>"$OUT/groups/$op.list"
    [ -f "$OUT/groups/$op.first" ] || { cat "$f" >>"$OUT/all.tsl"; touch "$OUT/groups/$op.first"; }
done <"$OUT/index.txt"
# Then the cases of each op in one process (a GPU process starts in a fraction of a second,
# and there are hundreds of cases): when every case of the op says ok, they pass; otherwise
# each case runs in its own process, so a sticky error cannot hide the others.
for g in "$OUT"/groups/*.tsl; do
    list="${g%.tsl}.list"
    want=$(wc -l <"$list")
    got=0
    if timeout 120 "$TSL" "$g" >"$OUT/out" 2>"$OUT/err"; then got=$(grep -c '^ok$' "$OUT/out"); fi
    if [ "$got" -eq "$want" ]; then pass=$((pass + want)); continue; fi
    while read -r f; do run_case "$f"; done <"$list"
done
n=$(ls "$OUT"/cases | wc -l)
echo "parity: $pass agree, $fail differ or fail, $(wc -l <"$OUT/not_covered.txt") not covered on the GPU, $skip refused by the CPU ($n cases)"
[ $fail -eq 0 ]
