// sm_80 inline PTX: cp.async (+commit/wait groups), ldmatrix, mma.sync m16n8k16, redux.sync.
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void mma_tile(const uint16_t* __restrict__ a, const uint16_t* __restrict__ b,
                                   float* __restrict__ c, int* __restrict__ stats) {
    __shared__ __align__(128) uint16_t sa[16 * 16];
    __shared__ __align__(128) uint16_t sb[16 * 8];
    int lane = threadIdx.x & 31;
    // 16-byte cp.async per lane for A (512 bytes), 8-byte for B (256 bytes).
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                 :: "r"(smem_addr(sa + lane * 8)), "l"(a + lane * 8) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n"
                 :: "r"(smem_addr(sb + lane * 4)), "l"(b + lane * 4), "r"(lane < 16 ? 8 : 0) : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncthreads();

    uint32_t ra[4], rb[2];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3])
                 : "r"(smem_addr(sa + (lane % 16) * 16 + (lane / 16) * 8)));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(rb[0]), "=r"(rb[1])
                 : "r"(smem_addr(sb + (lane % 16) * 8)));
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    for (int i = 0; i < 4; ++i) c[lane * 4 + i] = d[i];

    int total, mx;
    asm volatile("redux.sync.add.s32 %0, %1, 0xffffffff;\n" : "=r"(total) : "r"(lane));
    asm volatile("redux.sync.max.u32 %0, %1, 0xffffffff;\n" : "=r"(mx) : "r"(lane * 3));
    if (lane == 0) { stats[0] = total; stats[1] = mx; }
}
