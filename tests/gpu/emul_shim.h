// emul_shim.h - what the plugin's hand-written kernel modules need of CUDA, for running them
// on the host (tests/gpu/emul.sh): blocks of one thread, the blocks of a launch one after
// another (emul_block of emul_grid; grid-stride kernels run as one block), so every loop
// walks its elements in order and __syncthreads has nothing to wait for. The modules'
// cooperating kernels (the one-block scan, the sort's tiles) take any block size, one
// included; tests/gpu/hostdev_shim.h runs them with 256 threads.
#include <cstdint>
#include <cstring>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
typedef unsigned char tsl_b8;
typedef long long tsl_i64;
typedef unsigned long long tsl_u64;
struct EmulDim { unsigned x; };
static unsigned emul_block, emul_grid = 1;   // a launch of blocks run one after another
static const EmulDim threadIdx = { 0 }, blockDim = { 1 };
#define blockIdx (EmulDim{ emul_block })
#define gridDim (EmulDim{ emul_grid })
inline long long tsl_tid() { return 0; }
inline long long tsl_nthreads() { return 1; }
inline void __syncthreads() {}
inline long long __double_as_longlong(double x) { long long b; std::memcpy(&b, &x, sizeof b); return b; }
