/* gpu_graph.c - the host side of CUDA Graph capture (gpu.h): the plugin's capture entries
 * (ops/gpu/cuda/graph.c) with their errors turned into op errors. The static VM decides what to
 * capture and when (vm/run/vm_seg.c). */
#include "gpu_impl.h"

int gpu_capture_begin(void) {
    char err[400];
    if (device_start(DEV_GPU)) return -1;
    return GPU_CALL(capture_begin, 0);
}

int gpu_copy_into(Tensor *dst, const Tensor *src) {
    char err[400];
    if (!gpu_cu) return device_start(DEV_GPU);
    return GPU_CALL(copy, dst->data, src->data, gpu_nbytes(src));
}

int gpu_capture_end(void **graph) {
    char err[400];
    *graph = NULL;
    return GPU_CALL(capture_end, graph);
}

int gpu_graph_launch(void *graph) {
    char err[400];
    return GPU_CALL(graph_launch, graph);
}

void gpu_graph_free(void *graph) {
    if (graph && gpu_cu) gpu_cu->graph_free(graph);
}
