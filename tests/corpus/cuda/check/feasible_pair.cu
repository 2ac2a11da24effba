// thread 0 writes a shared slot when cfg > 5, thread 32 reads it when cfg > 3, no barrier between
// expect: race
// why: with cfg = 7 both conditions hold: the store by thread 0 and the load by thread 32 (another warp) of slot[0] are not ordered
// launch: {"grid": [1], "block": [64], "buffers": {"cfg": {"dtype": "int32", "data": [7]}, "out": {"dtype": "int32", "shape": [64]}}, "params": ["cfg", "out"]}
extern "C" __global__ void feasible_pair(const int* cfg, int* out) {
  __shared__ int slot[1];
  int c = cfg[0];
  if (threadIdx.x == 0 && c > 5) slot[0] = c;
  if (threadIdx.x == 32 && c > 3) out[0] = slot[0];
}
