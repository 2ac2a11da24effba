// FlashAttention forward for one head, fp32: O = softmax(scale * Q K^T) V with Q, K, V, O [S, 32],
// never materialising the S x S scores. The fast side of the paper-style pair with naive.cu.
// A CTA of 4 warps owns 4 query rows, one per warp (q in registers), and walks the keys in tiles of
// 128 staged once in shared memory for the 4 warps (K and V, 33 KB). Per tile, lane j scores keys
// j, j + 32, j + 64, j + 96; the tile max and then the new running max m' = max(m, tile max) come
// from shfl.sync.bfly; the rescale factor exp(m - m') is applied to the running sum l and to the
// output accumulator (lane d holds o[d]) (online softmax); then l += sum_j exp(s_j - m') and
// o[d] += sum_j exp(s_j - m') V[j, d], with exp(s_j - m') broadcast from the lane that scored key j.
// After the last tile O = o / l. Keys past S score -inf (exp gives 0).

#include "../../common.cuh"

using namespace vk;

namespace {
constexpr int kD = 32, kTile = 128, kPer = kTile / 32, kWarps = 4;
}  // namespace

extern "C" __global__ void __launch_bounds__(kWarps * 32)
attention_flash(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                float* __restrict__ O, int S, float scale) {
  __shared__ float Ks[kTile][kD + 1];  // +1: lanes reading one column of different rows hit different banks
  __shared__ float Vs[kTile][kD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int i = blockIdx.x * kWarps + warp;
  // a warp past the last row computes row S - 1 again and does not store it: no branch depends on
  // the CTA index (the checker's symbolic grid then covers every CTA with two)
  const int iq = min(i, S - 1);
  float q[kD];
#pragma unroll
  for (int d = 0; d < kD; ++d) q[d] = Q[static_cast<size_t>(iq) * kD + d];
  float m = -INFINITY, l = 0.f, o = 0.f;  // o: output column `lane`
  for (int j0 = 0; j0 < S; j0 += kTile) {
    for (int e = threadIdx.x; e < kTile * kD; e += kWarps * 32) {
      const int j = e / kD, d = e % kD;
      const bool key = j0 + j < S;
      Ks[j][d] = key ? K[static_cast<size_t>(j0 + j) * kD + d] : 0.f;
      Vs[j][d] = key ? V[static_cast<size_t>(j0 + j) * kD + d] : 0.f;
    }
    __syncthreads();
    float s[kPer];
    float mt = -INFINITY;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int j = 32 * r + lane;
      float acc = 0.f;
#pragma unroll
      for (int d = 0; d < kD; ++d) acc = fmaf(q[d], Ks[j][d], acc);
      s[r] = j0 + j < S ? acc * scale : -INFINITY;
      mt = fmaxf(mt, s[r]);
    }
#pragma unroll
    for (int h = 16; h > 0; h >>= 1) mt = fmaxf(mt, __shfl_xor_sync(kFull, mt, h));
    const float mn = fmaxf(m, mt);
    const float corr = ex2((m - mn) * kLog2e);  // m = -inf before the first tile: 0
    float ls = 0.f;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      s[r] = ex2((s[r] - mn) * kLog2e);
      ls += s[r];
    }
#pragma unroll
    for (int h = 16; h > 0; h >>= 1) ls += __shfl_xor_sync(kFull, ls, h);
    l = l * corr + ls;
#ifdef BUG_NO_RESCALE
    float acc = o;  // bug: the accumulator keeps the old max's scale
#else
    float acc = o * corr;
#endif
#pragma unroll
    for (int r = 0; r < kPer; ++r)
#pragma unroll
      for (int j = 0; j < 32; ++j) acc = fmaf(__shfl_sync(kFull, s[r], j), Vs[32 * r + j][lane], acc);
    o = acc;
    m = mn;
    __syncthreads();
  }
  const float out = o / l;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.lt.s32 p, %2, %3;\n\t@p st.global.f32 [%0], %1;\n\t}"
               ::"l"(O + static_cast<size_t>(iq) * kD + lane), "f"(out), "r"(i), "r"(S) : "memory");
}
