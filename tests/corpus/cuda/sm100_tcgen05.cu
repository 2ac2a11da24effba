// sm_100a inline PTX: the tensor-memory life cycle (alloc, relinquish, st, ld, mma, commit to an
// mbarrier, waits, dealloc) and the tcgen05 thread-sync fences.
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(128)
tmem_roundtrip(const float* __restrict__ in, float* __restrict__ out, uint64_t adesc, uint64_t bdesc,
               uint32_t idesc) {
    __shared__ __align__(16) uint32_t tmem_base;
    __shared__ __align__(8) uint64_t bar;
    int tid = threadIdx.x;
    int warp = tid / 32;
    uint32_t b = smem_addr(&bar);
    if (warp == 0) {
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
                     :: "r"(smem_addr(&tmem_base)), "r"(64) : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
    }
    if (tid == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(b), "r"(1) : "memory");
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
    uint32_t taddr = tmem_base;
    // Each warp owns 32 TMEM lanes: lane field in the upper 16 bits.
    uint32_t my_rows = taddr + ((uint32_t)(warp * 32) << 16);

    uint32_t v[4];
    for (int i = 0; i < 4; ++i) v[i] = __float_as_uint(in[tid * 4 + i]);
    asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(my_rows), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
    asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");

    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
    if (tid == 0) {
        asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, acc;\n}\n"
                     :: "r"(taddr), "l"(adesc), "l"(bdesc), "r"(idesc), "r"(1) : "memory");
        asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n"
                     :: "r"(b) : "memory");
    }
    asm volatile("{\n.reg .pred P1;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
                 "@!P1 bra WAIT;\n}\n" :: "r"(b), "r"(0) : "memory");
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");

    uint32_t r[8];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
                 : "r"(my_rows) : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
    for (int i = 0; i < 8; ++i) out[tid * 8 + i] = __uint_as_float(r[i]);

    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
    __syncthreads();
    if (warp == 0) {
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" :: "r"(taddr), "r"(64) : "memory");
    }
}
