// scatter through a permutation: out[perm[i]] = x[i]
// expect: race_free
// why: perm is a permutation for this input, so no two threads store the same element
// launch: {"grid": [2], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 1}, "perm": {"dtype": "int32", "data": "@perm128.rev"}, "out": {"dtype": "float32", "shape": [128]}}, "params": ["x", "perm", "out", 128]}
extern "C" __global__ void scatter_permutation(const float* x, const int* perm, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[perm[i]] = x[i];
}
