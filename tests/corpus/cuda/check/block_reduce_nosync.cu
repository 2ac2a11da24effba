// tree reduction of a block's elements without the barrier inside the loop
// expect: race
// why: without a barrier in the loop, thread 0 reads s[32] in step k = 32 while thread 32 (another warp) wrote it in step k = 64, unordered
// launch: {"grid": [2], "block": [128], "buffers": {"x": {"dtype": "float32", "shape": [256], "init": "random", "seed": 9}, "out": {"dtype": "float32", "shape": [2]}}, "params": ["x", "out"]}
extern "C" __global__ void block_reduce_nosync(const float* x, float* out) {
  __shared__ float s[128];
  s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
