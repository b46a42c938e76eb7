/* nvrtc_opts.h - the options every generated kernel is compiled with (the plugin and
 * tests/gpu/ptx_check.c alike). No fused multiply-add and no fast math: the GPU's
 * elementwise results must not depend on what the compiler chose to contract. */
#ifndef TSL_CUDA_NVRTC_OPTS_H
#define TSL_CUDA_NVRTC_OPTS_H

#define GEN_NVRTC_OPTIONS "--fmad=false", "--std=c++17", "-default-device"
/* what the check compiles for without a GPU (the H200 is compute capability 9.0) */
#define GEN_CHECK_ARCH "compute_90"
#define GEN_CHECK_ARCH_OPTION "--gpu-architecture=compute_90"

#endif
