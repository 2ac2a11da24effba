// Device helpers shared by the hand-written candidates (examples/candidates) and pairs
// (examples/pairs): one definition of each PTX idiom they use. Included as "../../common.cuh".
#pragma once

#include <cstdint>

namespace vk {

constexpr unsigned kFull = 0xffffffffu;  // every lane of the warp
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

// 2^v and log2(v) as Triton computes tl.exp / tl.log: ex2.approx.f32, lg2.approx.f32 (no ftz)
__device__ __forceinline__ float ex2(float v) {
  float r;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float lg2(float v) {
  float r;
  asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
// exp(v - m)
__device__ __forceinline__ float expm(float v, float m) { return ex2((v - m) * kLog2e); }
__device__ __forceinline__ float rsqrt_approx(float v) {
  float r;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

// butterfly reductions over the 32 lanes (every lane gets the result)
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
  return v;
}

// 32 consecutive fp16 values as 16 words w[i] = (x[2i] low, x[2i + 1] high) -> 16 pairs
// p[j] = (x[j] low, x[j + 16] high): the order in which one shift of a 32-bit sign word puts the
// sign bits j and j + 16 on the two fp16 sign bits (bits 15 and 31)
__device__ __forceinline__ void pairs_j_j16(const uint32_t (&w)[16], uint32_t (&p)[16]) {
#pragma unroll
  for (int j = 0; j < 16; ++j) p[j] = __byte_perm(w[j >> 1], w[8 + (j >> 1)], (j & 1) ? 0x7632 : 0x5410);
}

// tensor cores (sm_80+): ldmatrix of four 8 x 8 b16 matrices, and mma.sync m16n8k16 fp16 -> fp32
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// d += a b (A 16 x 16 row-major fragment, B 16 x 8 column fragment b0 b1)
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace vk
