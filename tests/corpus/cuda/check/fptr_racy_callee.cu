// an indirectly called function that stores to one shared result slot from every thread
// expect: race
// why: record() stores each thread's own value to out[0]; threads of two warps call it with no synchronisation
// launch: {"grid": [1], "block": [64], "buffers": {"sel": {"dtype": "int32", "shape": [64], "init": "random", "seed": 4}, "out": {"dtype": "int32", "shape": [64]}}, "params": ["sel", "out"]}
__device__ __noinline__ void record(int* out, int v) { out[0] = v; }
__device__ __noinline__ void keep(int* out, int v) { out[v] = v; }
extern "C" __global__ void fptr_racy_callee(const int* sel, int* out) {
  int t = threadIdx.x;
  void (*f)(int*, int) = (t % 2) ? record : keep;
  f(out, t);
}
