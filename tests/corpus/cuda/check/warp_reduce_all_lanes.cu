// a butterfly warp reduction after which every lane of the one warp stores the sum (as Triton does)
// expect: race_free
// why: all 32 lanes store the same value, computed by __shfl_xor_sync, in one instruction of one warp
// launch: {"grid": [1], "block": [32], "buffers": {"x": {"dtype": "float32", "shape": [32], "init": "random", "seed": 8}, "out": {"dtype": "float32", "shape": [1]}}, "params": ["x", "out"]}
extern "C" __global__ void warp_reduce_all_lanes(const float* x, float* out) {
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  out[0] = v;
}
