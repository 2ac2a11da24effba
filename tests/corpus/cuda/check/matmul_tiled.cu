// 16x16 shared-memory tiled matrix multiply of 32x32 matrices
// expect: race_free
// why: each tile pair is loaded, used between two __syncthreads, then overwritten
// launch: {"grid": [2, 2], "block": [16, 16], "buffers": {"a": {"dtype": "float32", "shape": [32, 32], "init": "random", "seed": 12}, "b": {"dtype": "float32", "shape": [32, 32], "init": "random", "seed": 13}, "c": {"dtype": "float32", "shape": [32, 32]}}, "params": ["a", "b", "c", 32]}
extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[16][16], tb[16][16];
  int r = blockIdx.y * 16 + threadIdx.y, q = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < n; k += 16) {
    ta[threadIdx.y][threadIdx.x] = a[r * n + k + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(k + threadIdx.y) * n + q];
    __syncthreads();
    for (int j = 0; j < 16; ++j) acc += ta[threadIdx.y][j] * tb[j][threadIdx.x];
    __syncthreads();
  }
  c[r * n + q] = acc;
}
