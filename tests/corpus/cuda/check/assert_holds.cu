// device assert that holds for every thread of the launch
// expect: race_free
// why: i < n for every thread of the 2 x 64 grid with n = 128, so __assertfail is never called
// launch: {"grid": [2], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 2}, "y": {"dtype": "float32", "shape": [128]}}, "params": ["x", "y", 128]}
#include <cassert>
extern "C" __global__ void assert_holds(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < n);
  y[i] = x[i] + 1.0f;
}
