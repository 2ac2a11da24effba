// Library-generated PTX: cooperative_groups tile reductions and cluster sync, cuda::barrier +
// cuda::memcpy_async (compiler-emitted mbarrier and cp.async), warp intrinsics.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>

// The block-scope barrier is initialised explicitly by thread 0 below.
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace cg = cooperative_groups;

extern "C" __global__ void tile_reduce(const int* __restrict__ in, int* __restrict__ out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = block.group_index().x * block.size() + block.thread_rank();
    int v = i < n ? in[i] : 0;
    int s = cg::reduce(warp, v, cg::plus<int>());
    int m = cg::reduce(warp, v, cg::greater<int>());
    unsigned same = __match_any_sync(__activemask(), v & 7);
    if (warp.thread_rank() == 0) {
        atomicAdd(out, s);
        atomicMax(out + 1, m);
        out[2 + (i >> 5)] = __popc(same) + __reduce_add_sync(0xffffffffu, (unsigned)v);
    }
    __syncwarp();
    __nanosleep(100);
}

extern "C" __global__ void staged_copy(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float buf[2][256];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    for (int base = 0, stage = 0; base < n; base += 256, stage ^= 1) {
        cuda::memcpy_async(block, buf[stage], in + base, sizeof(float) * 256, bar);
        bar.arrive_and_wait();
        out[base + block.thread_rank()] = buf[stage][block.thread_rank()] * 2.0f;
        cg::memcpy_async(block, buf[stage ^ 1], in + base, sizeof(float) * 256);
        cg::wait(block);
    }
}
