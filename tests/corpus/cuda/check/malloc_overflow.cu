// per-thread scratch from the device heap written one element past its end
// expect: out_of_bounds
// why: the fill loop runs j <= k and writes p[k], 4 bytes past the k * 4 bytes malloc returned
// launch: {"grid": [1], "block": [32], "buffers": {"out": {"dtype": "int32", "shape": [32]}}, "params": ["out", 8]}
extern "C" __global__ void malloc_overflow(int* out, int k) {
  int* p = (int*)malloc(k * sizeof(int));
  if (p == nullptr) { out[threadIdx.x] = -1; return; }
  for (int j = 0; j <= k; ++j) p[j] = j * threadIdx.x;
  out[threadIdx.x] = p[k - 1];
  free(p);
}
