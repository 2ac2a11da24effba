// per-warp partial sums in shared memory indexed with warpSize
// expect: race_free
// why: lane 0 of each warp (threadIdx.x % warpSize == 0) writes its warp's slot; thread 0 reads the slots after __syncthreads
// launch: {"grid": [1], "block": [128], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 6}, "out": {"dtype": "float32", "shape": [1]}}, "params": ["x", "out"]}
extern "C" __global__ void warpsize_lanes(const float* x, float* out) {
  __shared__ float part[32];
  float v = x[threadIdx.x];
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % warpSize == 0) part[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int w = 0; w < blockDim.x / warpSize; ++w) s += part[w];
    out[0] = s;
  }
}
