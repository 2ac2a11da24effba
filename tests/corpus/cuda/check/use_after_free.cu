// reads a device-heap allocation after freeing it
// expect: out_of_bounds
// why: p[0] is read after free(p): the allocation no longer exists
// launch: {"grid": [1], "block": [32], "buffers": {"out": {"dtype": "int32", "shape": [32]}}, "params": ["out"]}
extern "C" __global__ void use_after_free(int* out) {
  volatile int* p = (volatile int*)malloc(4 * sizeof(int));
  if (p == nullptr) return;
  p[0] = threadIdx.x;
  free((void*)p);
  out[threadIdx.x] = p[0];
}
