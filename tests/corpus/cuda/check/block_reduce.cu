// tree reduction of a block's elements in shared memory
// expect: race_free
// why: every step reads and writes disjoint halves between __syncthreads
// launch: {"grid": [2], "block": [128], "buffers": {"x": {"dtype": "float32", "shape": [256], "init": "random", "seed": 9}, "out": {"dtype": "float32", "shape": [2]}}, "params": ["x", "out"]}
extern "C" __global__ void block_reduce(const float* x, float* out) {
  __shared__ float s[128];
  s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
