// 32x32 tiled matrix transpose through shared memory (padded tile), 32x8 threads per tile
// expect: race_free
// why: the tile is written, then read transposed after __syncthreads
// launch: {"grid": [2, 2], "block": [32, 8], "buffers": {"in": {"dtype": "float32", "shape": [64, 64], "init": "random", "seed": 10}, "out": {"dtype": "float32", "shape": [64, 64]}}, "params": ["in", "out", 64]}
extern "C" __global__ void transpose_tiled(const float* in, float* out, int n) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
