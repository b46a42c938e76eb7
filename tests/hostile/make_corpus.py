#!/usr/bin/env python3
"""make_corpus.py - writes the hostile-input corpus (tests/hostile/*.tsl).

Each file starts with `# expect: TEXT` (the error message must contain TEXT) and may have
`# flags: ...` (extra command-line options). tests/run.sh runs each: it must exit 1 with a
FILE:LINE:COL: error: line containing TEXT, within 5 s, with no sanitizer report.
Run it again after changing the cases; the files are committed. Some cases are written by
hand next to these (load_garbage.tsl, export_to_directory.tsl, the range_*, values_* ...:
every .tsl here that this script does not name), so it overwrites its own files and leaves
every other file alone."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
cases = []

def case(name, expect, body, flags=None):
    head = "# expect: %s\n" % expect
    if flags:
        head += "# flags: %s\n" % flags
    data = head.encode() + (body if isinstance(body, bytes) else body.encode())
    cases.append((name, data))

# --- lexical -----------------------------------------------------------------------
for i, s in enumerate(['x = "abc', "x = 'abc", 'x = "abc\\', 'print("a\nb")', 'x = "\\']):
    case("lex_unterminated_%d" % i, "unterminated string", s + "\n")
for i, esc in enumerate(["\\q", "\\u{}", "\\u{110000}", "\\u{D800}", "\\u{zz}", "\\u12", "\\x41", "\\u{1234567}"]):
    case("lex_bad_escape_%d" % i, "invalid escape sequence", 'x = "%s"\n' % esc)
for i, b in enumerate([b"\x80", b"\xc0\x80", b"\xed\xa0\x80", b"\xf5\x80\x80\x80", b"\xe2\x82", b"\xff\xfe",
                       b"\xf0\x9f\x98", b"\xc3"]):
    case("lex_bad_utf8_%d" % i, "invalid UTF-8", b"x = 1\ny = \"" + b + b"\"\n")
    case("lex_bad_utf8_code_%d" % i, "invalid UTF-8", b"x = 1 " + b + b"\n")
for i, pre in enumerate([b"", b"x = 1\n", b"x = \"a", b"# comment ", b"fn f() {"]):
    case("lex_nul_%d" % i, "NUL byte", pre + b"\x00 + 1\n")
# 5-8 were & | ~ ^ until v2 made them operators; characters that stay foreign took their places
for i, ch in enumerate(["$", "`", "?", "\\", "!", "\u00ac", "\u20ac", "\u00d7", "\u00f7", "\u00e9t\u00e9 = 1"]):
    case("lex_bad_char_%d" % i, "unexpected character", "x = 1\ny = 2 %s 3\n" % ch if i < 9 else "%s\n" % ch)
for i, num in enumerate(["12abc", "1e5x", "0x1Fg", "1_000_"]):
    case("lex_bad_number_%d" % i, "malformed number", "x = %s\n" % num)
case("lex_1mib_line", "undefined variable 'nope'", 'x = "' + "a" * (1 << 20) + '" + nope\n')
case("lex_1mib_comment", "undefined variable 'nope'", "# " + "c" * (1 << 20) + "\nx = nope\n")

# --- syntax ------------------------------------------------------------------------
syntax = [
    ("unclosed_paren", "expected", "x = (1 + 2\n"),
    ("unclosed_bracket", "expected", "x = [1, 2\n"),
    ("unclosed_brace", "expected", "fn f() {\n  return 1\n"),
    ("unclosed_dict", "expected", "x = {a: 1\n"),
    ("stray_brace", "unexpected '}'", "x = 1\n}\n"),
    ("stray_paren", "expected end of statement", "x = 1)\n"),
    ("chained_compare", "comparison operators do not chain", "x = 1 < 2 < 3\n"),
    ("chained_eq", "comparison operators do not chain", "x = 1 == 1 == 1\n"),
    ("assign_literal", "cannot assign to this expression", "1 = 2\n"),
    ("assign_call", "cannot assign to this expression", "f() = 2\n"),
    ("missing_operand", "expected an expression", "x = 1 +\n\n"),
    ("double_operator", "expected an expression", "x = 1 + * 2\n"),
    ("kw_then_positional", "positional argument after keyword argument", "f(a=1, 2)\n"),
    ("repeated_kw", "keyword argument 'a' repeated", "f(a=1, a=2)\n"),
    ("duplicate_param", "duplicate parameter name", "fn f(a, a) { }\n"),
    ("default_order", "parameter without default follows one with a default", "fn f(a=1, b) { }\n"),
    ("fn_no_body", "expected '{'", "fn f()\n"),
    ("if_no_block", "expected '{'", "if true print(1)\n"),
    ("for_no_in", "expected 'in'", "for i range(3) { }\n"),
    ("for_no_name", "loop variable name", "for 3 in range(3) { }\n"),
    ("import_no_name", "module name", "import 3\n"),
    ("dict_bad_key", "dict key", "x = {1: 2}\n"),
    ("dict_no_colon", "':' after dict key", "x = {a 2}\n"),
    ("field_not_name", "field name after '.'", "x = d.\n"),
    ("name_then_number", "expected end of statement", "x = d.3\n"),
    ("else_alone", "expected an expression", "else { }\n"),
    ("two_statements", "expected end of statement", "x = 1 y = 2\n"),
    ("keyword_as_name", "expected", "fn = 3\n"),
    ("return_then_junk", "expected end of statement", "fn f() { return 1 2 }\n"),
]
for name, expect, body in syntax:
    case("syntax_" + name, expect, body)
for kind, o, c in [("paren", "(", ")"), ("bracket", "[", "]"), ("neg", "-", ""), ("not", "not ", "")]:
    case("nest_%s_10k" % kind, "nesting too deep", "x = " + o * 10000 + "1" + c * 10000 + "\n")
case("nest_blocks_10k", "nesting too deep", "if true {" * 10000 + "}" * 10000 + "\n")
case("nest_fn_literals", "nesting too deep", "f = " + "fn() { return " * 2000 + "1" + " }" * 2000 + "\n")
case("flat_chain_2e5", "expression too deeply nested", "x = 0" + "+0" * 200000 + "\n")
case("flat_and_chain", "expression too deeply nested", "x = true" + " and true" * 20000 + "\n")
case("nest_small_limit", "nesting too deep", "x = ((((((1))))))\n", flags="--max-nesting 3")

# --- names, calls, scope -----------------------------------------------------------
runtime = [
    ("undefined", "undefined variable 'nope'", "x = nope\n"),
    ("undefined_in_fn", "undefined variable 'y'", "fn f() { return y }\nf()\n"),
    ("read_before_assign", "undefined variable 'z'", "fn f() { q = z\n z = 1 }\nf()\n"),
    ("too_many_args", "takes 1 argument but 3 were given", "fn f(a) { }\nf(1, 2, 3)\n"),
    ("missing_arg", "missing argument 'b'", "fn f(a, b) { }\nf(1)\n"),
    ("unknown_kw", "unknown keyword argument 'z'", "fn f(a) { }\nf(1, z=2)\n"),
    ("kw_twice", "multiple values for parameter 'a'", "fn f(a) { }\nf(1, a=2)\n"),
    ("builtin_too_many", "takes at most", "x = len(1, 2)\n"),
    ("builtin_unknown_kw", "unknown keyword argument", "x = sum(zeros(2), bogus=1)\n"),
    ("call_number", "a number is not callable", "x = 3\nx()\n"),
    ("call_string", "a string is not callable", 'x = "f"\nx()\n'),
    ("call_nil", "a nil is not callable", "x = nil\nx()\n"),
    ("dict_no_forward", "no 'forward' field", "m = {a: 1}\nm(2)\n"),
    ("recursion_1e6", "maximum call depth exceeded", "fn r(n) { return r(n + 1) }\nr(0)\n"),
    ("mutual_recursion", "maximum call depth exceeded", "fn a(n) { return b(n) }\nfn b(n) { return a(n) }\na(1)\n"),
    ("recursion_depth_flag", "maximum call depth exceeded", "fn r(n) { return r(n + 1) }\nr(0)\n", "--max-depth 50"),
    ("c_stack_guard", "stack overflow", "fn r(n) { return 1 + r(n + 1) }\nr(0)\n", "--max-depth 100000000"),
    ("endless_while_ops", "operation budget exceeded", "while true { }\n", "--max-ops 100000"),
    ("endless_for_ops", "operation budget exceeded", "for i in range(1000000000) { }\n", "--max-ops 100000"),
    ("endless_recursion_ops", "operation budget exceeded", "fn f() { return f() }\nf()\n", "--max-ops 1000 --max-depth 100000"),
    ("timeout", "time limit exceeded", "while true { }\n", "--timeout 0.5"),
    ("timeout_static", "time limit exceeded", "x = 0\nstatic { while true { x = x + 1 } }\n", "--timeout 0.5"),
    ("assert_false", "assertion failed", "assert(false)\n"),
    ("assert_msg", "assertion failed: boom", 'assert(1 > 2, "boom")\n'),
    ("error_fmt", "%s%n%x%p", 'error("%s%n%x%p")\n'),
    ("missing_key_fmt", "key '%s%n' not found", 'd = {a: 1}\nx = d["%s%n"]\n'),
    ("field_fmt", "has no field", 'x = 3\ny = x.%s\n'.replace("%s", "fmt")),
    ("return_top", "'return' outside a function", "return 1\n"),
    ("break_top", "'break' or 'continue' outside a loop", "break\n"),
    ("break_in_fn", "'break' or 'continue' outside a loop", "fn f() { break }\nf()\n"),
    # found before anything runs: in a function never called, around which a loop does not count
    ("continue_in_uncalled_fn", "'break' or 'continue' outside a loop", "for i in range(3) {\n  fn f() { continue }\n}\n"),
    ("import_misplaced_continue", "'break' or 'continue' outside a loop", "import misplaced_continue\n"),
    ("static_return", "'return' cannot leave a static block", "fn f() { static { return 1 } }\nf()\n"),
    ("static_continue", "'continue' cannot leave a static block", "for i in range(2) { static { continue } }\n"),
    ("import_missing", "module 'no_such_module' not found", "import no_such_module\n"),
    ("list_index", "list index out of range", "l = [1]\nx = l[5]\n"),
    ("list_index_neg", "list index out of range", "l = [1]\nx = l[-5]\n"),
    ("list_index_float", "must be an integer", "l = [1]\nx = l[0.5]\n"),
    ("list_index_huge", "list index out of range", "l = [1]\nx = l[1e300]\n"),
    ("string_index", "string index out of range", 'x = "ab"[9]\n'),
    ("pop_empty", "pop() from an empty list", "x = pop([])\n"),
    ("push_number", "push() needs a list", "push(3, 4)\n"),
    ("keys_list", "keys() needs a dict", "x = keys([1])\n"),
    ("missing_key", "key 'zz' not found in dict", "d = {a: 1}\nx = d.zz\n"),
    ("dict_nonstring_key", "dict keys are strings", "d = {a: 1}\nx = d[1]\n"),
    ("int_bad_string", "invalid integer literal", 'x = int("12a")\n'),
    ("int_nan", "cannot convert nan", "x = int(0 / 0)\n"),
    ("int_inf", "cannot convert inf", "x = int(1 / 0)\n"),
    ("float_bad_string", "invalid number", 'x = float("abc")\n'),
    ("float_hex_string", "invalid number", 'x = float("0x10")\n'),
    ("len_number", "len() of a number", "x = len(3)\n"),
    ("range_step_zero", "step must not be zero", "x = range(1, 5, 0)\n"),
    ("range_float", "must be an integer", "x = range(1.5)\n"),
    ("range_huge_list", "too large for a list", "x = range(1e12)\n"),
    ("for_number", "cannot iterate over a number", "for x in 3 { }\n"),
    ("for_0d_tensor", "cannot iterate over a 0-d tensor", "for x in tensor(3) { }\n"),
    ("unary_string", "unsupported operand type for unary '-'", 'x = -"a"\n'),
    ("add_list_number", "unsupported operand types for '+'", "x = [1] + 2\n"),
    ("compare_mixed", "unsupported operand types for '<'", 'x = 1 < "a"\n'),
    ("ambiguous_if", "ambiguous truth value", "if tensor([1, 2]) { }\n"),
    ("ambiguous_while", "ambiguous truth value", "while zeros(3) { }\n"),
    ("ambiguous_not", "ambiguous truth value", "x = not ones(2)\n"),
    ("ambiguous_and", "ambiguous truth value", "x = ones(2) and 1\n"),
    ("ambiguous_assert", "ambiguous truth value", "assert(ones(2))\n"),
    ("device_not_string", "device must be", 'device(1)\n'),
    ("device_unknown", "unknown device", 'x = to(zeros(2), "tpu")\n'),
    ("grad_nonscalar", "f must return a one-element float tensor or a number", "g = grad(fn(x) { return x })(tensor([1.0, 2.0]))\n"),
    ("dis_plain_fn", "is not a static fn", "fn f() { }\ndis(f)\n"),
    ("cyclic_import", "cyclic import of module 'cyc_a' (cyc_a -> cyc_b -> cyc_a)", "import cyc_a\n"),
    # issue 11 (strings, lists, files): results bounded like printed text, files regular only
    ("str_repeat_huge", "more than the limit of 67108864", 's = "ab" * 1e12\n'),
    ("str_repeat_inf", "more than the limit of 67108864", 's = "ab" * inf\n'),
    ("str_repeat_nan", "repeats a string a whole number of times, got nan", 's = "ab" * nan\n'),
    ("replace_blowup", "more than the limit of 67108864", 's = replace("a" * 100000, "a", "b" * 100000)\n'),
    ("format_width_huge", "width is more than", 's = format(1, "999999999999999999999")\n'),
    ("format_precision_huge", "precision is more than", 's = format(1, ".99999999999999999999f")\n'),
    ("read_text_dir", "is not a regular file", 's = read_text("/")\n'),
    ("exit_nan", "code must be an integer from 0 to 255, got nan", "exit(nan)\n"),
    ("sorted_key_error", "boom", 'x = sorted([3, 1, 2], key=fn(v) { error("boom") })\n'),
]
for item in runtime:
    name, expect, body = item[:3]
    case("run_" + name, expect, body, item[3] if len(item) > 3 else None)

# --- tensors -----------------------------------------------------------------------
tensors = [
    ("reshape_overflow", "too large", "x = reshape(zeros(2), [2, 13, 419, 691, 823, 2977518503])\n"),
    ("zeros_overflow", "too large", "x = zeros([4294967296, 4294967296, 4294967296])\n"),
    ("zeros_64gib", "--max-tensor-bytes", "x = zeros([16, 1024, 1024, 1024])\n"),
    ("ones_64gib_f64", "--max-tensor-bytes", 'x = ones([8, 1024, 1024, 1024], "f64")\n'),
    ("full_huge", "--max-tensor-bytes", "x = full([100000, 100000], 1)\n"),
    ("randn_huge", "--max-tensor-bytes", "x = randn([1000000, 1000000])\n"),
    ("arange_huge", "too many", "x = arange(0, 1e18, 0.5)\n"),
    ("eye_huge", "--max-tensor-bytes", "x = eye(1000000)\n"),
    ("linspace_negative", "must be non-negative", "x = linspace(0, 1, -5)\n"),
    ("eye_negative", "must be non-negative", "x = eye(-1)\n"),
    ("negative_dim", "negative dimension", "x = zeros([3, -2])\n"),
    ("negative_dim_reshape", "negative dimension", "x = reshape(zeros(6), [-2, -3])\n"),
    ("two_minus_one", "only one dimension can be -1", "x = reshape(zeros(6), [-1, -1])\n"),
    ("reshape_mismatch", "cannot reshape", "x = reshape(zeros(6), [4, 2])\n"),
    ("rank_33", "rank 33 is above the limit of 32", "x = zeros([" + ", ".join(["1"] * 33) + "])\n"),
    ("rank_33_reshape", "rank 33 is above the limit of 32", "x = reshape(zeros(1), [" + ", ".join(["1"] * 33) + "])\n"),
    ("rank_33_nested", "nesting deeper than rank 32", "x = tensor(" + "[" * 33 + "1" + "]" * 33 + ")\n"),
    ("expand_rank_33", "rank would exceed 32", "x = expand_dims(zeros([" + ", ".join(["1"] * 32) + "]), 0)\n"),
    ("memory_limit", "--max-memory", "a = zeros(1000)\nb = zeros(1000)\n", "--max-memory 6000"),
    ("broadcast_add", "shape mismatch for '+': [2, 3] and [3, 2]", "x = zeros([2, 3]) + zeros([3, 2])\n"),
    ("broadcast_mul", "shape mismatch for '*': [4] and [5]", "x = ones(4) * ones(5)\n"),
    ("broadcast_cmp", "shape mismatch for '<'", "x = ones(4) < ones(3)\n"),
    ("broadcast_maximum", "shape mismatch for 'maximum'", "x = maximum(ones(4), ones(3))\n"),
    ("broadcast_where", "shape mismatch for 'where'", "x = where(ones(2) > 0, ones(3), ones(4))\n"),
    ("broadcast_to_bad", "cannot broadcast", "x = broadcast_to(ones(3), [2, 4])\n"),
    ("matmul_mismatch", "shape mismatch for '@': [2, 3] and [2, 3]", "x = zeros([2, 3]) @ zeros([2, 3])\n"),
    ("matmul_0d", "at least one dimension", "x = tensor(1) @ tensor(2)\n"),
    ("matmul_batch", "shape mismatch for '@'", "x = zeros([2, 2, 3]) @ zeros([3, 3, 2])\n"),
    ("matmul_number", "'@' needs two tensors", "x = zeros(2) @ 3\n"),
    ("concat_mismatch", "differ outside axis", "x = concat([zeros([2, 3]), zeros([2, 4])])\n"),
    ("concat_rank", "same rank", "x = concat([zeros([2, 3]), zeros(3)])\n"),
    ("concat_empty", "at least one tensor", "x = concat([])\n"),
    ("concat_0d", "zero-dimensional", "x = concat([tensor(1), tensor(2)])\n"),
    ("stack_mismatch", "same shape", "x = stack([zeros(2), zeros(3)])\n"),
    ("index_oob", "index 5 is out of bounds for axis 1 with size 3", "x = zeros([2, 3])[0, 5]\n"),
    ("index_int64_min", "out of bounds for axis 0", "x = zeros(3)[-9223372036854775807]\n"),
    ("index_int64_max", "is out of range", "x = zeros(3)[9223372036854775807]\n"),
    ("index_largest_double", "out of bounds for axis 0", "x = zeros(3)[9223372036854774784]\n"),
    ("index_huge", "out of range", "x = zeros(3)[1e30]\n"),
    ("index_too_many", "too many indices for tensor", "x = zeros([2, 2])[0, 0, 0]\n"),
    ("index_two_ellipsis", "single ellipsis", "x = zeros([2, 2])[..., ...]\n"),
    ("index_float", "tensor index must be an integer", "x = zeros(3)[1.5]\n"),
    ("index_nan", "tensor index must be an integer", "x = zeros(3)[0 / 0]\n"),
    ("index_string", "cannot index a tensor with a string", 'x = zeros(3)["a"]\n'),
    ("slice_step_zero", "slice step cannot be zero", "x = zeros(5)[::0]\n"),
    ("list_slice_step_zero", "slice step cannot be zero", "x = [1, 2][::0]\n"),
    ("gather_oob", "out of bounds for axis 0 with size 3", 'x = zeros(3)[tensor([0, 7], "i64")]\n'),
    ("gather_f32", "must be i64 or bool", "x = zeros(3)[tensor([0.0, 1.0])]\n"),
    ("mask_mismatch", "boolean index did not match", "x = zeros(3)[tensor([true, false])]\n"),
    ("index_set_shape", "cannot assign a value of shape", "t = zeros(3)\nt[0:2] = ones(3)\n"),
    ("int_mod_zero", "integer modulo by zero", 'x = tensor([1], "i64") % 0\n'),
    ("int_mod_zero_tensor", "integer modulo by zero", 'x = tensor([4, 5], "i64") % tensor([1, 0], "i64")\n'),
    ("int_neg_pow", "negative integer powers", 'x = tensor([2], "i64") ** -1\n'),
    ("bool_sub", "'-' is not supported for bool tensors", "x = tensor([true]) - tensor([false])\n"),
    ("bool_neg", "unary '-' is not supported for bool tensors", "x = -tensor([true])\n"),
    ("nan_to_int", "cannot convert nan to i64", 'x = astype(tensor([0 / 0]), "i64")\n'),
    ("inf_to_int", "cannot convert inf to i64", 'x = astype(tensor([1 / 0]), "i64")\n'),
    ("big_to_int", "out-of-range value", 'x = astype(tensor([1e30]), "i64")\n'),
    ("nan_tensor_i64", "cannot convert nan to i64", 'x = tensor([0 / 0], "i64")\n'),
    ("bad_dtype", "dtype must be one of", 'x = zeros(2, "f16")\n'),
    ("astype_bad", "dtype must be one of", 'x = astype(zeros(2), "int")\n'),
    ("ragged", "ragged nested list", "x = tensor([[1, 2], [3]])\n"),
    ("tensor_of_string", "cannot make a tensor from a string", 'x = tensor(["a"])\n'),
    ("tensor_of_dict", "cannot make a tensor from a dict", "x = tensor({a: 1})\n"),
    ("axis_oob", "axis 2 is out of range for a tensor of rank 2", "x = sum(zeros([2, 2]), axis=2)\n"),
    ("axis_repeated", "axis 0 is repeated", "x = sum(zeros([2, 2]), axis=[0, 0])\n"),
    ("axis_huge", "out of range", "x = sum(zeros([2, 2]), axis=1e9)\n"),
    ("max_empty", "max of an empty axis", "x = max(zeros([0, 3]), axis=0)\n"),
    ("argmax_empty", "argmax of an empty axis", "x = argmax(zeros(0))\n"),
    ("argmax_two_axes", "axis must be a single number", "x = argmax(zeros([2, 2]), axis=[0, 1])\n"),
    ("softmax_axis", "out of range", "x = softmax(zeros([2, 2]), axis=5)\n"),
    ("softmax_0d", "rank 1 or more", "x = softmax(tensor(1))\n"),
    ("transpose_perm", "axes has 1 entries", "x = transpose(zeros([2, 2]), [0])\n"),
    ("transpose_repeat", "axis 0 is repeated", "x = transpose(zeros([2, 2]), [0, 0])\n"),
    ("squeeze_not_one", "has size 3, not 1", "x = squeeze(zeros([3, 1]), axis=0)\n"),
    ("expand_axis", "out of range", "x = expand_dims(zeros(2), 5)\n"),
    ("randint_empty", "must be greater than low", "x = randint(5, 5, [3])\n"),
    ("item_many", "not one", "x = item(zeros(3))\n"),
    ("float_many", "only a one-element tensor", "x = float(zeros(3))\n"),
    ("dot_rank3", "rank above 2", "x = dot(zeros([2, 2, 2]), zeros([2, 2]))\n"),
    ("attr_unknown", "tensor has no attribute 'foo'", "x = zeros(2).foo\n"),
    ("clip_string", "must be a number", 'x = clip(zeros(2), "a", 1)\n'),
    ("shape_not_list", "shape must be a list", 'x = zeros("3")\n'),
    ("shape_float", "must be an integer", "x = zeros([2.5])\n"),
    ("static_shape_error", "shape mismatch for '+': [3] and [4]", "a = zeros(3)\nb = zeros(4)\nstatic { c = a + b }\n"),
    ("static_index_error", "out of bounds", "t = zeros([2, 2])\nstatic { for i in range(5) { v = t[i] } }\n"),
    ("static_assert", "assertion failed: in static", 'static { for i in range(3) { assert(i < 2, "in static") } }\n'),
]
for item in tensors:
    name, expect, body = item[:3]
    case("tensor_" + name, expect, body, item[3] if len(item) > 3 else None)

# --- I/O -------------------------------------------------------------------------------
io_cases = [
    ("npy_missing", "cannot open", 'x = load_npy("/nonexistent/file.npy")\n'),
    ("npy_not_npy", "not a .npy file", 'x = load_npy("tests/hostile/data/not_npy.npy")\n'),
    ("npy_truncated", "truncated", 'x = load_npy("tests/hostile/data/truncated.npy")\n'),
    ("npy_huge_shape", "too large", 'x = load_npy("tests/hostile/data/huge_shape.npy")\n'),
    ("npy_big_endian", "supported are", 'x = load_npy("tests/hostile/data/big_endian.npy")\n'),
    ("npy_fortran", "Fortran order", 'x = load_npy("tests/hostile/data/fortran.npy")\n'),
    ("npy_bad_version", "format version", 'x = load_npy("tests/hostile/data/version9.npy")\n'),
    ("npy_bad_header", "malformed", 'x = load_npy("tests/hostile/data/bad_header.npy")\n'),
    ("npy_negative_dim", "malformed shape", 'x = load_npy("tests/hostile/data/negative_dim.npy")\n'),
    # writers make missing folders: a folder that cannot be made (a file is in the way) is the error
    ("npy_save_dir", "Not a directory", 'save_npy("/dev/null/dir/x.npy", zeros(2))\n'),
    ("csv_missing", "cannot open", 'x = load_csv("/nonexistent.csv")\n'),
    ("csv_text", "not a number", 'x = load_csv("tests/hostile/data/text.csv")\n'),
    ("csv_ragged", "columns, expected", 'x = load_csv("tests/hostile/data/ragged.csv")\n'),
]
for name, expect, body in io_cases:
    case("io_" + name, expect, body)

# --- numbers to integers, zero-size shapes, files that are not regular (issue 10) ---------
number_cases = [
    ("num_zero_dim_huge", "too large", "x = zeros([0, 2**62, 2**62])\n"),
    ("num_reshape_zero_dim_huge", "too large", "x = reshape(zeros([0]), [0, 2**40, 2**40])\n"),
    ("num_arange_inf", "cannot compute the length", "x = arange(1e308 * 10, 1e308 * 10)\n"),
    ("num_range_i64_span", "too large for a list", "x = range(-2**53, 2**53)\n"),
    ("num_concat_zero_dim_huge", "too large", "x = zeros([2**62, 0])\ny = concat([x, x])\n"),
    ("tolist_zero_dim_huge", "too many list items", "x = zeros([2**40, 0])\ny = tolist(x)\n"),
    ("io_npy_zero_dim_huge", "too large", 'x = load_npy("tests/hostile/data/zero_dim_huge.npy")\n'),
    ("io_npy_dup_key", "duplicate key", 'x = load_npy("tests/hostile/data/dup_key.npy")\n'),
    ("io_csv_nul", "NUL byte", 'x = load_csv("tests/hostile/data/nul.csv")\n'),
    ("io_csv_dev_zero", "not a regular file", 'x = load_csv("/dev/zero")\n'),
    ("io_npy_dev_zero", "not a regular file", 'x = load_npy("/dev/zero")\n'),
]
# issue 24: load() reads a graph file through the same helper (tests/run.sh: FIFOs, tsl run)
number_cases += [
    ("io_load_dev_zero", "not a regular file", 'g = load("/dev/zero")\n'),
    ("io_read_text_dev_zero", "not a regular file", 'x = read_text("/dev/zero")\n'),
]
for name, expect, body in number_cases:
    case(name, expect, body)

def npy(header, data=b"", version=1):
    h = header.encode()
    if version == 1:
        return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data
    return b"\x93NUMPY" + bytes([version, 0]) + len(h).to_bytes(4, "little") + h + data

def main():
    for name, data in cases:
        with open(os.path.join(HERE, name + ".tsl"), "wb") as f:
            f.write(data)
    d = os.path.join(HERE, "data")
    os.makedirs(d, exist_ok=True)
    files = {
        "not_npy.npy": b"hello, this is not numpy\n",
        "truncated.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }", b"\0" * 16),
        "huge_shape.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4000000000, 4000000000, 4000000000), }"),
        "big_endian.npy": npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", b"\0" * 4),
        "fortran.npy": npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", b"\0" * 4),
        "version9.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", b"\0" * 4, 9),
        "bad_header.npy": npy("{'shape': (1,), }", b"\0" * 4),
        "negative_dim.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", b"\0" * 4),
        "text.csv": b"1,2,3\n4,five,6\n",
        "ragged.csv": b"1,2,3\n4,5\n",
    }
    files.update({   # issue 10: numbers, files
        "zero_dim_huge.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4611686018427387904), }"),
        "dup_key.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (0,), }", b"\0" * 8),
        "nul.csv": b"1,2,3\n4,5\x00,6\n",
        "bom.csv": b"\xef\xbb\xbf1,2\n3,4\n",   # tests/run.sh: a leading BOM is skipped
    })
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    mods = os.path.join(HERE, "mods")   # on TSL_PATH for the corpus: helper modules
    os.makedirs(mods, exist_ok=True)
    with open(os.path.join(mods, "cyc_a.tsl"), "w") as f:
        f.write("import cyc_b\n")
    with open(os.path.join(mods, "cyc_b.tsl"), "w") as f:
        f.write("import cyc_a\n")
    print("%d hostile cases written" % len(cases))

main()
