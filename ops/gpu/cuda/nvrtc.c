/* nvrtc.c - generated source to loaded kernels: NVRTC compiles prelude + source for the
 * device's architecture with the options of nvrtc_opts.h (no FMA contraction, no fast
 * math), and the result is cached by a hash of everything that went into it, in memory for
 * the process and on disk ($XDG_CACHE_HOME/tsl/cuda or ~/.cache/tsl/cuda) for the next
 * one. The disk cache is a convenience: any failure to read or write it is ignored. */
#include <errno.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cuda_impl.h"
#include "gen.h"
#include "nvrtc_opts.h"

static uint64_t fnv(uint64_t h, const char *s) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* ---------- the disk cache ---------- */

static void cache_dir(char *buf, size_t n) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(buf, n, "%s/tsl/cuda", xdg);
    else if (home && *home) snprintf(buf, n, "%s/.cache/tsl/cuda", home);
    else buf[0] = 0;
}

static void mkdirs(char *path) {
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    mkdir(path, 0755);
}

static char *disk_read(uint64_t h, size_t *len) {
    char dir[3000], path[3200];
    cache_dir(dir, sizeof dir);
    if (!dir[0]) return NULL;
    snprintf(path, sizeof path, "%s/%016llx.cubin", dir, (unsigned long long)h);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *data = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        rewind(f);
        data = size > 0 ? malloc((size_t)size) : NULL;
        if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
            free(data);
            data = NULL;
        }
        *len = size > 0 ? (size_t)size : 0;
    }
    fclose(f);
    return data;
}

/* Written under a temporary name and renamed, so a reader never sees half a file. */
static void disk_write(uint64_t h, const char *data, size_t len) {
    char dir[3000], tmp[3200], path[3200];
    cache_dir(dir, sizeof dir);
    if (!dir[0]) return;
    mkdirs(dir);
    snprintf(tmp, sizeof tmp, "%s/%016llx.%d.tmp", dir, (unsigned long long)h, (int)getpid());
    snprintf(path, sizeof path, "%s/%016llx.cubin", dir, (unsigned long long)h);
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    bool ok = fwrite(data, 1, len, f) == len;
    if (fclose(f) == 0 && ok) rename(tmp, path);
    else unlink(tmp);
}

/* ---------- compiling ---------- */

static char *compile(const char *src, const char *arch, size_t *len, char *err, size_t n) {
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, "tsl", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, n, "NVRTC: %s", nvrtcGetErrorString(r));
        return NULL;
    }
    const char *opts[] = { GEN_NVRTC_OPTIONS, arch };
    r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof *opts), opts);
    char *out = NULL;
    if (r != NVRTC_SUCCESS) {   /* a generator bug: the log's first line says where */
        size_t loglen = 0;
        nvrtcGetProgramLogSize(prog, &loglen);
        char *log = malloc(loglen + 1);
        if (log) {
            nvrtcGetProgramLog(prog, log);
            log[loglen] = 0;
        }
        snprintf(err, n, "NVRTC could not compile a generated kernel: %.300s", log ? log : nvrtcGetErrorString(r));
        free(log);
    } else if (nvrtcGetCUBINSize(prog, len) == NVRTC_SUCCESS && (out = malloc(*len)) &&
               nvrtcGetCUBIN(prog, out) != NVRTC_SUCCESS) {
        free(out);
        out = NULL;
        snprintf(err, n, "NVRTC: no CUBIN");
    }
    nvrtcDestroyProgram(&prog);
    return out;
}

/* ---------- the in-memory cache: (source hash, kernel name) -> function ---------- */

#define SLOTS 8192
static struct {
    uint64_t key;
    CUfunction f;
} slots[SLOTS];
static struct {
    uint64_t hash;
    CUmodule m;
} modules[SLOTS];
static int nslots, nmodules;   /* kept under 3/4 full, so a probe always ends */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static CUmodule module_for(const char *src, char *err, size_t n) {
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", cuda.cc_major, cuda.cc_minor);
    uint64_t h = fnv(fnv(fnv(0xcbf29ce484222325ull, gen_prelude()), src), arch);
    size_t i = h % SLOTS;
    for (; modules[i].m; i = (i + 1) % SLOTS)
        if (modules[i].hash == h) return modules[i].m;
    size_t len = 0;
    char *cubin = disk_read(h, &len);
    bool fresh = !cubin;
    if (fresh) {
        size_t total = strlen(gen_prelude()) + strlen(src) + 1;
        char *full = malloc(total);
        if (!full) {
            snprintf(err, n, "out of memory");
            return NULL;
        }
        snprintf(full, total, "%s%s", gen_prelude(), src);
        cubin = compile(full, arch, &len, err, n);
        free(full);
        if (!cubin) return NULL;
    }
    CUmodule m;
    CUresult r = cuModuleLoadData(&m, cubin);
    if (r == CUDA_SUCCESS && fresh) disk_write(h, cubin, len);
    free(cubin);
    if (r != CUDA_SUCCESS) return cuda_fail_drv(r, "cuModuleLoadData", err, n), NULL;
    if (nmodules < SLOTS / 4 * 3) {   /* past that, a module is loaded again when asked again */
        modules[i].hash = h;
        modules[i].m = m;
        nmodules++;
    }
    return m;
}

/* The driver API needs the context current on the calling thread (the runtime binds it by
 * itself): an interpreter on another thread than the one that started the GPU launches too. */
static int bind_context(char *err, size_t n) {
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    if (cur == cuda.ctx) return 0;
    CUresult r = cuCtxSetCurrent(cuda.ctx);
    return r == CUDA_SUCCESS ? 0 : cuda_fail_drv(r, "cuCtxSetCurrent", err, n);
}

CUfunction cuda_kernel(const char *src, const char *name, char *err, size_t n) {
    if (bind_context(err, n)) return NULL;
    uint64_t key = fnv(fnv(0xcbf29ce484222325ull, src), name);
    pthread_mutex_lock(&lock);
    size_t i = key % SLOTS;
    for (; slots[i].f; i = (i + 1) % SLOTS)
        if (slots[i].key == key) {
            CUfunction f = slots[i].f;
            pthread_mutex_unlock(&lock);
            return f;
        }
    CUmodule m = module_for(src, err, n);
    CUfunction f = NULL;
    if (m) {
        CUresult r = cuModuleGetFunction(&f, m, name);
        if (r != CUDA_SUCCESS) {
            cuda_fail_drv(r, name, err, n);
            f = NULL;
        } else if (nslots < SLOTS / 4 * 3) {
            slots[i].key = key;
            slots[i].f = f;
            nslots++;
        }
    }
    pthread_mutex_unlock(&lock);
    return f;
}

/* ---------- launching ---------- */

#define THREADS 256

static int launch(CUfunction f, unsigned blocks, void **params, char *err, size_t n) {
    if (cuda.lost) {
        snprintf(err, n, "the GPU was lost after an earlier error");
        return -1;
    }
    if (bind_context(err, n)) return -1;
    CUresult r = cuLaunchKernel(f, blocks, 1, 1, THREADS, 1, 1, 0, (CUstream)cuda.stream, params, NULL);
    return r == CUDA_SUCCESS ? 0 : cuda_fail_drv(r, "cuLaunchKernel", err, n);
}

int cuda_launch(CUfunction f, int64_t count, void **params, char *err, size_t n) {
    if (count <= 0) return 0;
    int64_t blocks = (count + THREADS - 1) / THREADS, cap = (int64_t)(cuda.sms > 0 ? cuda.sms : 1) * 32;
    return launch(f, (unsigned)(blocks < cap ? blocks : cap), params, err, n);
}

int cuda_launch_blocks(CUfunction f, int64_t items, void **params, char *err, size_t n) {
    if (items <= 0) return 0;
    return launch(f, (unsigned)(items < 65535 * 16 ? items : 65535 * 16), params, err, n);
}
