# TSL build. `make` builds bin/tsl, installing missing Debian packages first.
# `make test` runs every test; `make demo` runs the showcase; `make asan` / `make test-asan`
# build and test with AddressSanitizer + UBSan. The library is $(BIN)/libtsl.a and
# $(BIN)/libtsl.so with the public header include/tsl.h; bin/tsl is built on that header alone.

CC      ?= gcc
BUILD   ?= build
BIN     ?= bin
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wformat=2 -Wformat-nonliteral -Wno-unused-parameter
# -ffp-contract=off: eager and static must compute identical bits, so the compiler
# may never fuse a*b+c into an FMA in one place and not in another.
OPT     ?= -O2 -g
# -fPIC so the same objects make libtsl.so; -fvisibility=hidden so only what tsl.h marks
# TSL_API leaves it (and calls inside the library stay direct).
PIC     := -fPIC -fvisibility=hidden -ftls-model=initial-exec
# The rooms (docs/internals.md) whose headers the library's files include by bare name
# ("tensor.h", "opt.h"); ops/cpu/ and ops/gpu/cuda/ are included by path ("cpu/cpu.h").
ROOMS   := lang lang/api ops ops/gpu vm vm/compile vm/opt vm/run vm/file
CFLAGS  += $(CSTD) $(WARN) $(OPT) -ffp-contract=off -fno-strict-aliasing $(PIC) -Iinclude $(ROOMS:%=-I%) -I$(BUILD) \
           -I/usr/include/x86_64-linux-gnu $(FORMAT_CFLAGS)
# What sees the public header only (repl/, tests/api/, examples/): an #include of an internal
# header fails to build.
PUBLIC_CFLAGS := $(CSTD) $(WARN) $(OPT) -Iinclude
# Debian's pthread OpenBLAS, named by its directory so the machine's libblas alternative does
# not decide: its gemm is safe on several threads at once (the serial build's is not), so the
# thread pool splits large products by rows (ops/cpu/linalg.c, "Rows on the thread pool").
# OpenBLAS's own threads are held to one (its splits change bits); bin/tsl starts none
# (repl/main.c, one_core_while_loading).
BLAS_DIR    := /usr/lib/x86_64-linux-gnu/openblas-pthread
BLAS_CFLAGS := -I/usr/include/x86_64-linux-gnu/openblas-pthread
# LAPACK (ops/cpu/lapack.c) is the one libopenblas exports (dgesv_, ...), called through
# lapack.h from liblapacke-dev; no -llapacke, which would resolve LAPACK through the
# system's liblapack.so.3 alternative instead of this build.
BLAS_LIBS   := -L$(BLAS_DIR) -Wl,-rpath,$(BLAS_DIR) -lopenblas
CHECK_LIBS  := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
# cairo draws plot.save's PNG and SVG files (lang/plot.c)
CAIRO_CFLAGS := $(shell pkg-config --cflags cairo fontconfig 2>/dev/null || echo -I/usr/include/cairo)
CAIRO_LIBS   := $(shell pkg-config --libs cairo fontconfig 2>/dev/null || echo -lcairo -lfontconfig)
# The file formats of others: .npz through libzip, safetensors' JSON header through jansson
# (ops/npz.c, ops/safetensors.c). pkg-config is read when make starts, before the packages are
# installed on a fresh machine, so it may not answer yet: then the plain names and paths.
FORMAT_CFLAGS := $(shell pkg-config --cflags libzip jansson 2>/dev/null)
FORMAT_LIBS   := $(shell pkg-config --libs libzip jansson 2>/dev/null || echo -lzip -ljansson)
LIB_LIBS := $(BLAS_LIBS) $(CAIRO_LIBS) -lsleef $(FORMAT_LIBS) -lunistring -lm -lpthread
LDLIBS  := $(LIB_LIBS) -lreadline

# g++: make test's host-memory stand-in for the GPU compiles the CUDA kernels as host C++
DEB_PKGS := g++ libreadline-dev libopenblas-pthread-dev liblapacke-dev re2c check pkg-config libsleef-dev python3-numpy \
            openmpi-bin libopenmpi-dev libzip-dev libjansson-dev
DEB_PKGS += libcairo2-dev
# GNU libunistring: upper()/lower()'s full Unicode case mapping (lang/casemap.c)
DEB_PKGS += libunistring-dev
STAMP    := $(BUILD)/.deps-ok

LANG_SRC := $(wildcard lang/*.c lang/api/*.c) $(BUILD)/lex.c
OPS_SRC  := $(wildcard ops/*.c ops/cpu/*.c ops/gpu/*.c)
VM_SRC   := $(wildcard vm/*.c vm/*/*.c)
CORE_SRC := $(LANG_SRC) $(OPS_SRC) $(VM_SRC)
CORE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(patsubst $(BUILD)/%,%,$(CORE_SRC)))
REPL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard repl/*.c))
UNIT_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/unit/*.c))
API_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/api/test_*.c))
LIB_A    := $(BIN)/libtsl.a
LIB_SO   := $(BIN)/libtsl.so
MPI_PLUGIN := $(BIN)/libtsl_mpi.so
CUDA_PLUGIN := $(BIN)/libtsl_cuda.so
PTX_CHECK   := $(BIN)/ptx_check

.PHONY: all deps layers test unit scripts static-coverage demo asan test-asan tsan deploy-test bench bench-quick bench-venv fuzz fuzz-smoke clean gpu-test gpu-check gpu-standin test-long jupyter jupyter-test
all: $(BIN)/tsl $(LIB_SO) $(MPI_PLUGIN) $(CUDA_PLUGIN) $(PTX_CHECK)

# The MPI plugin (ops/mpi/): built with mpicc (installed with the packages above, so looked
# for when the recipe runs) and loaded by ops/dist.c only under mpirun, so bin/tsl itself never
# links MPI. Without mpicc it is not built and the MPI tests say they are skipped.
$(MPI_PLUGIN): ops/mpi/mpi_plugin.c ops/mpi/plugin.h | $(STAMP)
	@mkdir -p $(BIN)
	@if command -v mpicc >/dev/null 2>&1; then \
	  echo "mpicc ... -shared -o $@ $<"; mpicc $(CSTD) $(WARN) $(OPT) -fPIC -shared -fvisibility=hidden -o $@ $<; \
	else echo "note: no mpicc (openmpi-bin, libopenmpi-dev): $@ not built, MPI tests will be skipped"; fi

# The CUDA plugin (ops/gpu/cuda/): C host code compiled against the CUDA toolkit and linked to
# the runtime, the driver, cuBLAS, cuSOLVER and NVRTC; ops/gpu/gpu.c dlopens it on the first use of the GPU,
# so bin/tsl and libtsl.so never link CUDA (`make test` checks). Built whenever the toolkit's
# nvcc is installed (CUDA_HOME); otherwise a note, and the GPU checks say they are skipped.
# ptx_check compiles every kernel the generator can produce with NVRTC (no GPU needed).
CUDA_HOME ?= /usr/local/cuda
CUDA_SRC  := ops/gpu/cuda/cuda_plugin.c ops/gpu/cuda/cuda_kernels.c ops/gpu/cuda/nvrtc.c ops/gpu/cuda/gen.c ops/gpu/cuda/gen_coll.c \
             ops/gpu/cuda/nccl.c ops/gpu/cuda/graph.c ops/gpu/cuda/sort.c ops/gpu/cuda/gen_sort.c \
             ops/gpu/cuda/linalg.c ops/gpu/cuda/gen_linalg.c ops/gpu/cuda/solver.c \
             ops/gpu/cuda/conv.c ops/gpu/cuda/gen_conv.c ops/gpu/cuda/nn.c ops/gpu/cuda/gen_nn.c
CUDA_DEPS := $(CUDA_SRC) $(wildcard ops/gpu/cuda/*.h) ops/ops.def ops/opcall.h ops/tensor.h $(BUILD)/ew_cuda.h
CUDA_LINK := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs -Wl,-rpath,$(CUDA_HOME)/lib64
$(CUDA_PLUGIN): $(CUDA_DEPS) | $(STAMP)
	@mkdir -p $(BIN)
	@if [ -x $(CUDA_HOME)/bin/nvcc ]; then \
	  echo "cc ... -shared -o $@ ops/gpu/cuda/*.c (CUDA)"; \
	  $(CC) $(CSTD) $(WARN) $(OPT) -fPIC -shared -fvisibility=hidden -Iops -Iops/gpu -Iops/gpu/cuda -I$(BUILD) -I$(CUDA_HOME)/include \
	    -o $@ $(CUDA_SRC) $(CUDA_LINK) -lcusolver -lcublas -lnvrtc -lcudart -lcuda -ldl -lpthread || exit 1; \
	else echo "note: no nvcc ($(CUDA_HOME)/bin/nvcc): $@ not built, GPU checks will be skipped"; rm -f $@; fi
$(PTX_CHECK): tests/gpu/ptx_check.c ops/gpu/cuda/gen.c ops/gpu/cuda/gen.h ops/gpu/cuda/gen_coll.c ops/gpu/cuda/gen_coll.h ops/gpu/cuda/gen_args.h ops/gpu/cuda/nvrtc_opts.h ops/ops.def \
              ops/gpu/cuda/gen_sort.c ops/gpu/cuda/gen_sort.h ops/gpu/cuda/gen_linalg.c ops/gpu/cuda/gen_linalg.h \
              ops/gpu/cuda/gen_conv.c ops/gpu/cuda/gen_conv.h ops/gpu/cuda/gen_nn.c ops/gpu/cuda/gen_nn.h $(BUILD)/ew_cuda.h | $(STAMP)
	@mkdir -p $(BIN)
	@if [ -x $(CUDA_HOME)/bin/nvcc ]; then \
	  echo "cc ... -o $@ tests/gpu/ptx_check.c ops/gpu/cuda/gen.c ops/gpu/cuda/gen_coll.c ops/gpu/cuda/gen_sort.c ops/gpu/cuda/gen_linalg.c ops/gpu/cuda/gen_conv.c ops/gpu/cuda/gen_nn.c -lnvrtc"; \
	  $(CC) $(CSTD) $(WARN) $(OPT) -Iops -Iops/gpu -I$(BUILD) -I$(CUDA_HOME)/include -o $@ tests/gpu/ptx_check.c ops/gpu/cuda/gen.c ops/gpu/cuda/gen_coll.c \
	    ops/gpu/cuda/gen_sort.c ops/gpu/cuda/gen_linalg.c ops/gpu/cuda/gen_conv.c ops/gpu/cuda/gen_nn.c \
	    $(CUDA_LINK) -lnvrtc || exit 1; \
	else rm -f $@; fi

# Install what the build needs, once. Root installs with apt; others are told what is missing.
$(STAMP): Makefile
	@mkdir -p $(BUILD)
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null \
	    || { echo "error: could not install:$$missing"; exit 1; }; \
	fi
	@touch $@
deps: $(STAMP)

# Each elementwise op's maths is written once, in ops/ew.def: ops/gen/ewgen.c writes the CPU's
# scalar functions and the GPU's device functions (with ops/gpu/cuda/tsl_ew.cuh) from it.
EWGEN  := $(BUILD)/ops/gen/ewgen
EW_GEN := $(BUILD)/ew_cpu.h $(BUILD)/ew_cuda.h
$(EWGEN): ops/gen/ewgen.c | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -o $@ $<
$(BUILD)/ew_cpu.h: ops/ew.def $(EWGEN)
	$(EWGEN) cpu ops/ew.def >$@.tmp && mv $@.tmp $@
$(BUILD)/ew_cuda.h: ops/ew.def ops/gpu/cuda/tsl_ew.cuh $(EWGEN)
	$(EWGEN) cuda ops/ew.def ops/gpu/cuda/tsl_ew.cuh >$@.tmp && mv $@.tmp $@
$(CORE_OBJ) $(UNIT_OBJ) $(BUILD)/ops/gpu/cuda/gen.o: | $(EW_GEN)

# The native tier (vm/run/jit.c) has ops/cpu/lanes512.h's text built in, for the C it generates.
$(BUILD)/lanes512_src.h: ops/cpu/lanes512.h | $(STAMP)
	@mkdir -p $(dir $@)
	{ printf '%s\n' '#define LANES512_SRC \'; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n" \\/' $<; printf '%s\n' '    ""'; } >$@.tmp && mv $@.tmp $@
$(BUILD)/vm/run/jit.o: $(BUILD)/lanes512_src.h

$(BUILD)/lex.c: lang/lex.re lang/token.h | $(STAMP)
	@mkdir -p $(dir $@)
	re2c -W --no-generation-date --no-version -o $@ $<

# The compiler and its flags, rewritten only when they change: objects depend on it, so a
# change of flags (as -fPIC for the shared library) rebuilds them.
FLAGS_STAMP := $(BUILD)/.flags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(CFLAGS) $(PUBLIC_CFLAGS) $(BLAS_CFLAGS) $(BLAS_LIBS)' | cmp -s - $@ || echo '$(CC) $(CFLAGS) $(PUBLIC_CFLAGS) $(BLAS_CFLAGS) $(BLAS_LIBS)' > $@
FORCE:

$(BUILD)/%.o: %.c $(FLAGS_STAMP) | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BLAS_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# CPU kernels: AVX2 code generation (the build's baseline) and -O3 so loops vectorise;
# math512.c and chain512.c hold the AVX-512 paths, used only when the processor has AVX-512F.
$(BUILD)/ops/cpu/%.o: CFLAGS += -mavx2 -O3
$(BUILD)/lang/plot.o: CFLAGS += $(CAIRO_CFLAGS)
$(BUILD)/ops/cpu/math512.o $(BUILD)/ops/cpu/chain512.o: CFLAGS += -mavx512f

$(BUILD)/lex.o: $(BUILD)/lex.c $(FLAGS_STAMP)
	$(CC) $(CFLAGS) -Wno-unused-const-variable -MMD -MP -c $< -o $@

$(BUILD)/repl/%.o: repl/%.c $(FLAGS_STAMP) | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(PUBLIC_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/api/%.o: tests/api/%.c $(FLAGS_STAMP) | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(PUBLIC_CFLAGS) -MMD -MP -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@mkdir -p $(BIN)
	rm -f $@
	ar rcs $@ $^

# Only the tsl_* functions are exported (TSL_API); the rest stays inside.
$(LIB_SO): $(CORE_OBJ)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -shared -Wl,-soname,libtsl.so -o $@ $^ $(LIB_LIBS) $(LDFLAGS)

$(BIN)/tsl: $(REPL_OBJ) $(LIB_A)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(LDFLAGS)

# The deploy example links libtsl.so and nothing else (the library brings its own).
$(BIN)/deploy: examples/deploy/deploy.c include/tsl.h $(LIB_SO)
	$(CC) $(PUBLIC_CFLAGS) -o $@ $< -L$(BIN) -ltsl -Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

$(BIN)/threads: $(BUILD)/tests/api/threads.o $(LIB_A)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LIB_LIBS) $(LDFLAGS)

$(BIN)/pool_threads: $(BUILD)/tests/api/pool_threads.o $(LIB_A)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LIB_LIBS) $(LDFLAGS)

$(BIN)/api_test: $(API_OBJ) $(LIB_A)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LIB_LIBS) $(CHECK_LIBS) $(LDFLAGS)

# the unit tests check the generator's table against ops.def (no CUDA needed for that)
$(BIN)/unit: $(CORE_OBJ) $(UNIT_OBJ) $(BUILD)/ops/gpu/cuda/gen.o
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(CHECK_LIBS) $(LDFLAGS)

# The layers (docs/internals.md): lang/ builds without vm/ (static code reaches the interpreter
# through the hooks vm_register() sets; only the C API glue, lang/api/, includes vm/), and
# device code stops at op_run: lang/ and vm/ name no gpu_ function (the device executor calls
# its DeviceImpl row's hooks), and only the CPU's executor, vm/run/exec_cpu.c and exec_rows.c, includes a CPU
# library header.
empty :=
space := $(empty) $(empty)
VM_HEADERS := $(notdir $(wildcard vm/*.h vm/*/*.h))
VM_FILES := $(wildcard vm/*.[ch] vm/*/*.[ch])
LANG_FILES := $(wildcard lang/*.[ch] lang/api/*.[ch])
LANG_ONLY_OBJ := $(filter-out $(BUILD)/lang/api%,$(filter $(BUILD)/lang/% $(BUILD)/lex.o,$(CORE_OBJ)))
layers: $(CORE_OBJ)
	@nm --defined-only $(filter $(BUILD)/vm/%,$(CORE_OBJ)) | awk 'NF == 3 {print $$3}' | sort -u >$(BUILD)/vm_syms.txt
	@bad=$$(nm -u $(LANG_ONLY_OBJ) | awk 'NF == 2 {print "lang/ links to vm/: " $$2}' | sort -u \
	    | grep -wFf $(BUILD)/vm_syms.txt; \
	  grep -nE '#include "($(subst $(space),|,$(VM_HEADERS)))"' $(wildcard lang/*.[ch]); \
	  grep -nE '\bgpu_[a-z0-9_]+ *\(' $(LANG_FILES) $(VM_FILES); \
	  grep -n '#include "cpu/' $(filter-out vm/run/exec_cpu.c vm/run/exec_rows.c vm/run/jit.c,$(LANG_FILES) $(VM_FILES))); \
	if [ -n "$$bad" ]; then echo "layer violations (see docs/internals.md):"; echo "$$bad"; exit 1; fi; \
	echo "layers: lang/ links without vm/, and lang/ and vm/ call no device's own functions"

# The tests' native-tier objects go to a cache of the build, not the user's ~/.cache/tsl/jit.
test test-asan test-long: export XDG_CACHE_HOME := $(CURDIR)/$(BUILD)/test-cache

test: $(BIN)/tsl $(BIN)/unit $(BIN)/api_test $(LIB_SO) $(MPI_PLUGIN) $(CUDA_PLUGIN) $(PTX_CHECK)
	@$(MAKE) --no-print-directory layers
	@echo "== unit tests (check)"
	@CK_VERBOSITY=normal $(BIN)/unit
	@echo "== public API tests (check, tsl.h only)"
	@CK_VERBOSITY=normal $(BIN)/api_test
	@echo "== script, error and REPL tests"
	@sh tests/run.sh $(BIN)/tsl
	@echo "== static idioms (tests/static_idioms: eager, static and --verify-static agree; PENDING still falls back)"
	@sh tests/static_idioms/run.sh $(BIN)/tsl
	@echo "== how much static code compiles (tests/static_coverage.sh; reports, never fails)"
	@sh tests/static_coverage.sh $(BIN)/tsl
	@echo "== the same bits for --threads 1 and --threads 2"
	@sh tests/threads/run.sh $(BIN)/tsl
	@echo "== libtsl.so exports exactly the functions include/tsl.h declares (the API tests' list)"
	@nm -D --defined-only $(LIB_SO) | awk '{print $$3}' | sort >$(BUILD)/exported.txt; \
	sed -n 's/^TSL_API .*[ *]\(tsl_[a-z0-9_]*\)(.*/\1/p' include/tsl.h | sort >$(BUILD)/declared.txt; \
	if ! cmp -s $(BUILD)/exported.txt $(BUILD)/declared.txt; then \
	  echo "exported (<) and declared in include/tsl.h (>) differ:"; diff $(BUILD)/exported.txt $(BUILD)/declared.txt; exit 1; fi; \
	echo "$$(wc -l <$(BUILD)/exported.txt) symbols, all declared in include/tsl.h"
	@$(MAKE) --no-print-directory gpu-test
	@$(MAKE) --no-print-directory deploy-test
	@$(MAKE) --no-print-directory jupyter-test

# The long checks CI runs after `make test` (each takes minutes on two cores, which would put
# `make test` past ten): the GPU stand-in's static graphs and ThreadSanitizer.
test-long: gpu-standin tsan

# The coverage figure: the static blocks and fns of tests/ and examples/ that compile without
# an eager fallback, and the ones that fall back grouped by reason (tests/static_coverage.sh).
static-coverage: $(BIN)/tsl
	@sh tests/static_coverage.sh $(BIN)/tsl --list

# Export the digits classifier, classify its rows from C, compare with what TSL's load() said:
# the commands of examples/deploy/README.md as written, into a folder that does not exist yet.
deploy-test: $(BIN)/tsl $(BIN)/deploy
	@echo "== deploy example (examples/deploy/README.md's commands, libtsl only)"
	@sh tests/deploy_readme.sh

# The Jupyter kernel (repl/jupyter/, docs/jupyter.md): ipykernel from PyPI in build/jupyter-venv
# and the kernel spec build/jupyter/kernels/tsl (repl/jupyter/setup.sh), installed for this user
# so that jupyter notebook, lab and console offer TSL.
jupyter: $(BIN)/tsl $(LIB_SO)
	@sh repl/jupyter/setup.sh >/dev/null || { echo "jupyter: repl/jupyter/setup.sh failed"; exit 1; }
	build/jupyter-venv/bin/jupyter kernelspec install --user --replace --name tsl build/jupyter/kernels/tsl
	@echo "jupyter: the TSL kernel is installed; start your Jupyter (or: build/jupyter-venv/bin/pip install jupyterlab && build/jupyter-venv/bin/jupyter lab) and pick TSL"

# nbclient runs tests/jupyter/kernel.ipynb and examples/train_digits.ipynb on the kernel and
# checks their outputs (part of `make test`; SKIP when pip cannot reach PyPI for the venv).
jupyter-test: $(BIN)/tsl $(LIB_SO)
	@echo "== the Jupyter kernel under nbclient (tests/jupyter)"
	@sh tests/jupyter/run.sh

# One model, four threads, a session each, and three states sharing the thread pool, under
# ThreadSanitizer (its own object tree); part of `make test-long`: any report fails it (exit 88).
TSAN_ENV := TSAN_OPTIONS=halt_on_error=1:exitcode=88
tsan: $(BIN)/tsl
	$(MAKE) CC=clang BUILD=build-tsan BIN=bin-tsan OPT="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" \
	  bin-tsan/threads bin-tsan/pool_threads
	@echo "== 4 threads, one model, under ThreadSanitizer"
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	$(BIN)/tsl examples/deploy/export_digits.tsl $$d 1 >/dev/null && \
	$(TSAN_ENV) bin-tsan/threads $$d/digits.tslg
	@echo "== 3 states on the thread pool, under ThreadSanitizer"
	@$(TSAN_ENV) bin-tsan/pool_threads

# What a machine without a GPU can check of the GPU backend (part of `make test`): no CUDA
# library in bin/tsl or libtsl.so, every generated kernel through NVRTC, and the errors
# asking for the GPU gives here (tests/gpu/nogpu.sh).
gpu-test: $(BIN)/tsl $(LIB_SO) $(CUDA_PLUGIN) $(PTX_CHECK)
	@echo "== GPU backend without a GPU (plugin, NVRTC, errors)"
	@sh tests/gpu/nogpu.sh $(BIN) $(CUDA_HOME)

# Static graphs on the host-memory stand-in device (its emulated CUDA Graph capture included),
# equal to eager code: tests/gpu/hostdev.sh static-only, a few minutes (docs/gpu.md).
gpu-standin: $(BIN)/tsl
	@echo "== static graphs on the GPU's host-memory stand-in device"
	@sh tests/gpu/hostdev.sh $(BIN)/tsl "" static-only

# On a machine with a GPU: build (on every core: GPU time is scarce), the parity suite,
# compute-sanitizer and the GPU benchmarks, logged to build/gpu-check.log (tests/gpu/check.sh;
# 6 minutes at most, TSL_GPU_CHECK_BUDGET).
gpu-check:
	$(MAKE) -j$$(nproc) $(BIN)/tsl $(CUDA_PLUGIN) $(PTX_CHECK)
	sh tests/gpu/check.sh $(BIN) $(CUDA_HOME)

unit: $(BIN)/unit
	$(BIN)/unit

demo: $(BIN)/tsl
	$(BIN)/tsl examples/demo.tsl

# Sanitizer build lives in its own tree so it never mixes with the normal objects.
asan:
	$(MAKE) CC=clang BUILD=build-asan BIN=bin-asan OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" bin-asan/tsl bin-asan/unit bin-asan/api_test

# A sanitizer report exits with its own status, so it can never pass for an expected error.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:exitcode=86 UBSAN_OPTIONS=halt_on_error=1:exitcode=87:print_stacktrace=1

test-asan: asan
	@echo "== unit tests under ASan/UBSan"
	@CK_FORK=no $(SAN_ENV) bin-asan/unit
	@echo "== public API tests under ASan/UBSan"
	@CK_FORK=no $(SAN_ENV) bin-asan/api_test
	@echo "== script tests under ASan/UBSan"
	@$(SAN_ENV) sh tests/run.sh bin-asan/tsl
	@echo "== static idioms under ASan/UBSan"
	@$(SAN_ENV) sh tests/static_idioms/run.sh bin-asan/tsl
	@echo "== --threads 1 and 2 under ASan/UBSan"
	@$(SAN_ENV) sh tests/threads/run.sh bin-asan/tsl

# libFuzzer targets (clang): tests/fuzz/fuzz_*.c, each linked with the whole library.
FUZZ_TARGETS := lex parse eval static npy npz safetensors csv graph
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
fuzz:
	$(MAKE) CC=clang BUILD=build-fuzz BIN=bin-fuzz OPT="$(FUZZ_FLAGS)" $(patsubst %,bin-fuzz/fuzz_%,$(FUZZ_TARGETS))

bin-fuzz/fuzz_%: $(CORE_OBJ) tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h tests/fuzz/fuzz_file.h
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_$*.c $(CORE_OBJ) $(LDLIBS)

# Each target for FUZZ_SECONDS (default 60), seeded from the tests, crashes saved to
# build-fuzz/crash-*; minimise and commit real findings to tests/fuzz-regress/.
FUZZ_SECONDS ?= 60
fuzz-smoke: fuzz
	@mkdir -p build-fuzz/corpus
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$t; \
	  case $$t in npy) seeds="tests/npy" ;; npz) seeds="tests/data/npz" ;; safetensors) seeds="tests/data/st" ;; \
	    csv) seeds="tests/data/csv tests/hostile/data" ;; graph) seeds="tests/fuzz/graph-seeds" ;; \
	    *) seeds="tests/scripts tests/errors tests/hostile tests/fuzz-regress" ;; esac; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  bin-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -max_len=4096 -timeout=10 \
	    -dict=tests/fuzz/tsl.dict -artifact_prefix=build-fuzz/ -print_final_stats=1 \
	    build-fuzz/corpus/$$t $$seeds >build-fuzz/$$t.log 2>&1; rc=$$?; \
	  grep -E "stat::number_of_executed_units|SUMMARY|Test unit written" build-fuzz/$$t.log; \
	  if [ $$rc -ne 0 ]; then echo "fuzz_$$t found a problem: see build-fuzz/$$t.log"; exit 1; fi; \
	done

bench: $(BIN)/tsl
	sh bench/run.sh

bench-quick: $(BIN)/tsl
	QUICK=1 sh bench/run.sh

# jax and torch (for the jax.jit and torch.compile rows) in build/bench-venv, from PyPI by name;
# bench/run.sh does this too, and skips it when the venv already imports them
bench-venv:
	sh bench/venv.sh

clean:
	rm -rf build build-asan build-fuzz build-tsan bin bin-asan bin-fuzz bin-tsan

-include $(CORE_OBJ:.o=.d) $(REPL_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(API_OBJ:.o=.d) $(BUILD)/tests/api/threads.d \
  $(BUILD)/tests/api/pool_threads.d $(BUILD)/ops/gpu/cuda/gen.d
