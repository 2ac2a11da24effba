// Naive softmax attention for one head, fp32: O = softmax(scale * Q K^T) V with Q, K, V, O [S, 32].
// The textbook steps in order, one CTA of 256 threads per query row i: the whole score row
// scale * q_i . k_j (keys j strided over the threads) into shared memory, its max (a shared-memory
// tree), exp(score - max) written back and their sum (another tree), then
// O[i, d] = (sum_j P[i, j] V[j, d]) / sum by 32 threads, one per d. The reference side of the
// paper-style pair with fast.cu (FlashAttention forward). exp(x) is ex2.approx(x log2 e).
// Requires S <= 8192 (the score row in 32 KB of shared memory).

#include "../../common.cuh"

using namespace vk;

namespace {
constexpr int kD = 32, kThreads = 256, kMaxS = 8192;
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
attention_naive(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                float* __restrict__ O, int S, float scale) {
  __shared__ float p[kMaxS];  // the score row, then its exponentials
  __shared__ float red[kThreads];
  const int i = blockIdx.x, tid = threadIdx.x;
  const float* q = Q + static_cast<size_t>(i) * kD;

  float m = -INFINITY;
  for (int j = tid; j < S; j += kThreads) {  // scores
    float s = 0.f;
    for (int d = 0; d < kD; ++d) s = fmaf(q[d], K[static_cast<size_t>(j) * kD + d], s);
    s *= scale;
    p[j] = s;
    m = fmaxf(m, s);
  }
  red[tid] = m;
  __syncthreads();
  for (int h = kThreads / 2; h > 0; h >>= 1) {  // max
    if (tid < h) red[tid] = fmaxf(red[tid], red[tid + h]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();

  float l = 0.f;
  for (int j = tid; j < S; j += kThreads) {  // exp and sum
    const float e = ex2((p[j] - m) * kLog2e);
    p[j] = e;
    l += e;
  }
  red[tid] = l;
  __syncthreads();
  for (int h = kThreads / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  l = red[0];

  if (tid < kD) {  // P V, divided by the sum
    float o = 0.f;
    for (int j = 0; j < S; ++j) o = fmaf(p[j], V[static_cast<size_t>(j) * kD + tid], o);
    O[static_cast<size_t>(i) * kD + tid] = o / l;
  }
}
