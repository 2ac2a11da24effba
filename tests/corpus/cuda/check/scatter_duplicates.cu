// scatter through an index array that holds one position twice
// expect: race
// why: idx[3] = idx[100] = 3: threads 3 and 100 (different CTAs) store different values to out[3]
// launch: {"grid": [2], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 1}, "idx": {"dtype": "int32", "data": "@perm128.dup"}, "out": {"dtype": "float32", "shape": [128]}}, "params": ["x", "idx", "out", 128]}
extern "C" __global__ void scatter_duplicates(const float* x, const int* idx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[idx[i]] = x[i];
}
