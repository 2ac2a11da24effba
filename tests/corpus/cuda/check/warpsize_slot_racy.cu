// every lane writes its warp's slot (threadIdx.x / warpSize) with its own value
// expect: race
// why: the 32 lanes of a warp store different values x[t] to part[w] in one instruction
// launch: {"grid": [1], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [64], "init": "random", "seed": 6}, "out": {"dtype": "float32", "shape": [2]}}, "params": ["x", "out"]}
extern "C" __global__ void warpsize_slot_racy(const float* x, float* out) {
  __shared__ float part[2];
  part[threadIdx.x / warpSize] = x[threadIdx.x];
  __syncthreads();
  if (threadIdx.x < 2) out[threadIdx.x] = part[threadIdx.x];
}
