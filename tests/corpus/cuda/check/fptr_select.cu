// calls one of two device functions through a function pointer chosen from the input
// expect: race_free
// why: the indirect call reaches add_one or twice (both known functions of the module); each thread stores its own out[t]
// launch: {"grid": [1], "block": [64], "buffers": {"sel": {"dtype": "int32", "shape": [64], "init": "random", "seed": 4}, "out": {"dtype": "int32", "shape": [64]}}, "params": ["sel", "out"]}
__device__ __noinline__ int add_one(int v) { return v + 1; }
__device__ __noinline__ int twice(int v) { return 2 * v; }
extern "C" __global__ void fptr_select(const int* sel, int* out) {
  int t = threadIdx.x;
  int (*f)(int) = (sel[t] & 1) ? add_one : twice;
  out[t] = f(t);
}
