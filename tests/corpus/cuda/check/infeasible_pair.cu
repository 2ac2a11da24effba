// thread 0 writes a shared slot when cfg > 5, thread 32 reads it when cfg < 3: never both
// expect: race_free
// why: both branches test the same value cfg[0]; no input makes cfg > 5 and cfg < 3 hold together, so the store and the load never both happen
// launch: {"grid": [1], "block": [64], "buffers": {"cfg": {"dtype": "int32", "data": [7]}, "out": {"dtype": "int32", "shape": [64]}}, "params": ["cfg", "out"]}
extern "C" __global__ void infeasible_pair(const int* cfg, int* out) {
  __shared__ int slot[1];
  int c = cfg[0];
  if (threadIdx.x == 0 && c > 5) slot[0] = c;
  if (threadIdx.x == 32 && c < 3) out[0] = slot[0];
}
