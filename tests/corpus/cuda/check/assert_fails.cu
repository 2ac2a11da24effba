// device assert on the input data that fails for one element
// expect: trap
// why: x[5] = -1 violates assert(x[i] >= 0): __assertfail is called and the kernel traps
// launch: {"grid": [1], "block": [32], "buffers": {"x": {"dtype": "int32", "data": [3, 1, 4, 1, 5, -1, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5]}, "y": {"dtype": "int32", "shape": [32]}}, "params": ["x", "y"]}
#include <cassert>
extern "C" __global__ void assert_fails(const int* x, int* y) {
  int i = threadIdx.x;
  assert(x[i] >= 0);
  y[i] = x[i] * 2;
}
