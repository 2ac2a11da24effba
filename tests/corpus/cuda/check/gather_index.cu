// gather through an index array: out[i] = x[idx[i]]
// expect: race_free
// why: idx holds valid positions of x for this input; each thread writes its own out[i]
// launch: {"grid": [2], "block": [64], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 1}, "idx": {"dtype": "int32", "data": "@perm128.rev"}, "out": {"dtype": "float32", "shape": [128]}}, "params": ["x", "idx", "out", 128]}
extern "C" __global__ void gather_index(const float* x, const int* idx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[idx[i]];
}
