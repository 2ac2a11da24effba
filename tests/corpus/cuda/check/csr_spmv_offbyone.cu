// CSR SpMV whose edge loop runs one past the row's end (e <= row[r+1])
// expect: out_of_bounds
// why: the last row reads val[nnz] and col[nnz], one past the end of both arrays
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "val": {"dtype": "float32", "data": "@graph48.val"}, "x": {"dtype": "float32", "shape": [48], "init": "random", "seed": 3}, "y": {"dtype": "float32", "shape": [48]}}, "params": ["row", "col", "val", "x", "y", 48]}
extern "C" __global__ void csr_spmv_offbyone(const int* row, const int* col, const float* val, const float* x, float* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 0.0f;
    for (int e = row[r]; e <= row[r + 1]; ++e) sum += val[e] * x[col[e]];
    y[r] = sum;
  }
}
