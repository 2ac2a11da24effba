// Tiled fp32 matmul, C[M, N] = A[M, K] @ B[K, N] (row-major): the fast side of the paper-style pair
// with naive.cu. A CTA of 16 x 16 threads owns a 64 x 64 tile of C; per step of 16 along K it
// stages a 64 x 16 tile of A (transposed) and a 16 x 64 tile of B in shared memory (zeros past the
// edges), then each thread updates its 4 x 4 outputs (rows ty + 16 i, columns tx + 16 j) from
// registers: every element loaded from global memory is used 64 times. Each output's terms are
// added in the same order as naive.cu (k ascending, one fma each), plus fma(0, 0, acc) for the
// zero-padded k of a ragged last step.

namespace {
constexpr int kB = 64, kBK = 16, kT = 16;
}

extern "C" __global__ void __launch_bounds__(kT * kT)
matmul_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kBK][kB];  // As[k][m]
  __shared__ float Bs[kBK][kB];  // Bs[k][n]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kT + tx;
  const int m0 = blockIdx.y * kB, n0 = blockIdx.x * kB;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = tid + i * kT * kT;
      const int am = e / kBK, ak = e % kBK;  // A: 64 rows x 16 k, read along k
      As[ak][am] = (m0 + am < M && k0 + ak < K) ? A[static_cast<size_t>(m0 + am) * K + k0 + ak] : 0.f;
      const int bk = e / kB, bn = e % kB;    // B: 16 k x 64 columns, read along n
      Bs[bk][bn] = (k0 + bk < K && n0 + bn < N) ? B[static_cast<size_t>(k0 + bk) * N + n0 + bn] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + kT * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + kT * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + kT * i, n = n0 + tx + kT * j;
      if (m < M && n < N) C[static_cast<size_t>(m) * N + n] = acc[i][j];
    }
}
