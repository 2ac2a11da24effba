// lane 0 of every warp sets one global flag with a plain store
// expect: race
// why: four warps store the same value 1 to flag[0] with no synchronisation: equal values from different warps are a data race
// launch: {"grid": [1], "block": [128], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 7}, "flag": {"dtype": "int32", "shape": [1]}}, "params": ["x", "flag"]}
extern "C" __global__ void flag_cross_warp(const float* x, int* flag) {
  if (threadIdx.x % 32 == 0 && x[threadIdx.x] > -100.0f) flag[0] = 1;
}
