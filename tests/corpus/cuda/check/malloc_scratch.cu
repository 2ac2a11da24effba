// per-thread scratch from the device heap: malloc, fill, sum, free
// expect: race_free
// why: each thread's malloc returns its own allocation; every access stays inside it and precedes the free
// launch: {"grid": [1], "block": [32], "buffers": {"out": {"dtype": "int32", "shape": [32]}}, "params": ["out", 8]}
extern "C" __global__ void malloc_scratch(int* out, int k) {
  int* p = (int*)malloc(k * sizeof(int));
  if (p == nullptr) { out[threadIdx.x] = -1; return; }
  for (int j = 0; j < k; ++j) p[j] = j * threadIdx.x;
  int s = 0;
  for (int j = 0; j < k; ++j) s += p[j];
  out[threadIdx.x] = s;
  free(p);
}
