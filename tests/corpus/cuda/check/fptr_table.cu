// calls device functions through a global table of function pointers
// expect: race_free
// why: ops[] holds the addresses of square and negate; each thread stores its own out[t]
// launch: {"grid": [1], "block": [64], "buffers": {"sel": {"dtype": "int32", "shape": [64], "init": "random", "seed": 4}, "out": {"dtype": "int32", "shape": [64]}}, "params": ["sel", "out"]}
__device__ __noinline__ int square(int v) { return v * v; }
__device__ __noinline__ int negate(int v) { return -v; }
__device__ int (*ops[2])(int) = {square, negate};
extern "C" __global__ void fptr_table(const int* sel, int* out) {
  int t = threadIdx.x;
  out[t] = ops[sel[t] & 1](t);
}
