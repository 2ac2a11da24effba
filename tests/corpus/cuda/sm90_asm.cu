// sm_90a inline PTX: mbarrier (init, arrive, expect_tx, try_wait.parity loop), TMA
// (cp.async.bulk.tensor with a CUtensorMap __grid_constant__ parameter), bulk copies and
// bulk groups, wgmma (fence, mma_async m64n64k16 with a 32-register accumulator, commit,
// wait), stmatrix, elect.sync, fence.proxy.async.
#include <cstdint>
#include <cuda.h>

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t phase) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "WAIT_LOOP:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra.uni WAIT_DONE;\n"
        "bra.uni WAIT_LOOP;\n"
        "WAIT_DONE:\n"
        "}\n" :: "r"(bar), "r"(phase) : "memory");
}

__device__ __forceinline__ uint64_t make_desc(uint32_t saddr) {
    // Shared-memory matrix descriptor: start address >> 4 in bits 0-13, leading byte offset in
    // 16-29, stride byte offset in 32-45, 128-byte swizzle in bits 62-63.
    uint64_t d = (saddr & 0x3FFFF) >> 4;
    d |= (uint64_t)(16 >> 4) << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

extern "C" __global__ void __launch_bounds__(128, 1)
tma_wgmma(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          float* __restrict__ out, const int* __restrict__ src, int* __restrict__ dst) {
    __shared__ __align__(1024) uint16_t sa[64 * 64];
    __shared__ __align__(1024) uint16_t sb[64 * 64];
    __shared__ __align__(128) int bulk[256];
    __shared__ __align__(8) uint64_t bar;
    uint32_t b = smem_addr(&bar);
    int tid = threadIdx.x;

    uint32_t leader;
    asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(leader));
    if (tid < 32 && leader) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(b), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();
    if (tid == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                     :: "r"(b), "r"((int)(sizeof(sa) + sizeof(sb) + sizeof(bulk))) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];\n"
                     :: "r"(smem_addr(sa)), "l"(&tmap_a), "r"(0), "r"((int)blockIdx.x * 64), "r"(b)
                     : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];\n"
                     :: "r"(smem_addr(sb)), "l"(&tmap_b), "r"((int)blockIdx.y * 64), "r"(0), "r"(b)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                     :: "r"(smem_addr(bulk)), "l"(src), "r"((int)sizeof(bulk)), "r"(b) : "memory");
    }
    mbar_wait(b, 0);

    float d[32];
    for (int i = 0; i < 32; ++i) d[i] = 0.0f;
    uint64_t da = make_desc(smem_addr(sa)), db = make_desc(smem_addr(sb));
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(1));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 32; ++i) out[(blockIdx.x * 128 + tid) * 32 + i] = d[i];

    // stmatrix back into shared memory, then a bulk store out of it.
    uint32_t r0 = __float_as_uint(d[0]), r1 = __float_as_uint(d[1]);
    uint32_t r2 = __float_as_uint(d[2]), r3 = __float_as_uint(d[3]);
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem_addr(sa + (tid % 32) * 8)), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (tid == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                     :: "l"(dst), "r"(smem_addr(bulk)), "r"((int)sizeof(bulk)) : "memory");
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" :: "r"(b) : "memory");
    }
    uint64_t state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];\n" : "=l"(state) : "r"(b) : "memory");
    (void)state;
}
