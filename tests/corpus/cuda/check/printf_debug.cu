// a kernel that prints a value from one thread (vprintf) and scales a vector
// expect: race_free
// why: printf reads its format string and its argument buffer; no other thread touches either
// launch: {"grid": [2], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 2}, "y": {"dtype": "float32", "shape": [128]}}, "params": ["x", "y", 128]}
#include <cstdio>
extern "C" __global__ void printf_debug(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("n=%d x[0]=%f\n", n, x[0]);
  if (i < n) y[i] = 2.0f * x[i];
}
