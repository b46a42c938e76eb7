/* alloc_check.c - the CUDA plugin's caching allocator on a GPU (make gpu-check): a loop that
 * allocates the same sizes every iteration stops calling cudaMalloc after the first one,
 * and a freed block comes back for the next request of its size class. Loads the plugin as
 * ops/gpu/gpu.c does; without a GPU it says so and exits 0. Usage: alloc_check PLUGIN */
#include <dlfcn.h>
#include <stdio.h>
#include "cuda/plugin.h"

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "bin/libtsl_cuda.so";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    TslCudaPluginFn get = h ? (TslCudaPluginFn)dlsym(h, "tsl_cuda_plugin") : NULL;
    const TslCudaPlugin *p = get ? get() : NULL;
    if (!p || p->abi != TSL_CUDA_ABI) {
        printf("alloc_check: SKIP, no plugin (%s)\n", h ? "not a CUDA plugin of this build" : dlerror());
        return 0;
    }
    char err[400] = "";
    if (p->init(err, sizeof err) != CUDA_OK) {
        printf("alloc_check: SKIP, no GPU (%s)\n", err[0] ? err : "no CUDA device found");
        return 0;
    }
    static const size_t sizes[] = { 4, 1000, 4096, 1 << 20, 3 << 20, 64 << 20 };
    enum { NSIZES = sizeof sizes / sizeof *sizes };
    int64_t after_first = 0, mallocs = 0, cached = 0;
    void *first[NSIZES] = { NULL };
    for (int it = 0; it < 20; it++) {
        void *b[NSIZES];
        for (int k = 0; k < NSIZES; k++) {
            if (p->alloc(&b[k], sizes[k], err, sizeof err)) {
                printf("alloc_check: FAIL, %s\n", err);
                return 1;
            }
            if (it == 0) first[k] = b[k];
            else if (it == 1 && b[k] != first[k]) {   /* the one block of its class, freed: it comes back */
                printf("alloc_check: FAIL, a %zu-byte request did not get the cached block back\n", sizes[k]);
                return 1;
            }
        }
        for (int k = NSIZES - 1; k >= 0; k--) p->free(b[k], sizes[k]);
        p->alloc_stats(&mallocs, &cached);
        if (it == 0) after_first = mallocs;
    }
    if (mallocs != after_first) {
        printf("alloc_check: FAIL, %lld cudaMalloc calls after the first iteration\n", (long long)(mallocs - after_first));
        return 1;
    }
    printf("alloc_check: %lld cudaMalloc calls for 20 iterations of %d sizes (all in the first), %lld bytes cached\n",
           (long long)mallocs, NSIZES, (long long)cached);
    return 0;
}
