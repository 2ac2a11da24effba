// CSR sparse matrix-vector product, one thread per row, rows guarded by n
// expect: race_free
// why: each thread writes its own y[row]; reads of val/col/x stay inside their arrays for this graph (the loop bounds come from row offsets)
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "val": {"dtype": "float32", "data": "@graph48.val"}, "x": {"dtype": "float32", "shape": [48], "init": "random", "seed": 3}, "y": {"dtype": "float32", "shape": [48]}}, "params": ["row", "col", "val", "x", "y", 48]}
extern "C" __global__ void csr_spmv(const int* row, const int* col, const float* val, const float* x, float* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 0.0f;
    for (int e = row[r]; e < row[r + 1]; ++e) sum += val[e] * x[col[e]];
    y[r] = sum;
  }
}
