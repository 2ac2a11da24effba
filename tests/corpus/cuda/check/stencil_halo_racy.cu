// 1-D three-point stencil that loads a halo into shared memory and forgets the barrier before reading it
// expect: race
// why: s[32] is written by thread 31 (warp 0) and read by thread 32 (warp 1) with no __syncthreads between
// launch: {"grid": [2], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 11}, "y": {"dtype": "float32", "shape": [128]}}, "params": ["x", "y", 128]}
extern "C" __global__ void stencil_halo_racy(const float* x, float* y, int n) {
  __shared__ float s[66];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x + 1] = x[i];
  if (threadIdx.x == 0) s[0] = i > 0 ? x[i - 1] : 0.0f;
  if (threadIdx.x == blockDim.x - 1) s[blockDim.x + 1] = i + 1 < n ? x[i + 1] : 0.0f;
  y[i] = s[threadIdx.x] + s[threadIdx.x + 1] + s[threadIdx.x + 2];
}
