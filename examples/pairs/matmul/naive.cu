// Naive fp32 matmul, C[M, N] = A[M, K] @ B[K, N] (row-major): one thread per output element, a loop
// over k reading A and B from global memory. The reference side of the paper-style pair with
// fast.cu (same signature, same summation order: k ascending, one fma per term).

extern "C" __global__ void __launch_bounds__(256)
matmul_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(A[static_cast<size_t>(row) * K + k], B[static_cast<size_t>(k) * N + col], acc);
  C[static_cast<size_t>(row) * N + col] = acc;
}
