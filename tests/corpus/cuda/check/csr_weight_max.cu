// heaviest edge of each vertex: a per-vertex loop whose body stores only when the weight grows
// expect: race_free
// why: each thread stores only best[v] and idx[v] of its own vertex; stores sit under data-dependent branches inside a data-dependent loop
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "val": {"dtype": "float32", "data": "@graph48.val"}, "best": {"dtype": "float32", "shape": [48]}, "idx": {"dtype": "int32", "shape": [48]}}, "params": ["row", "col", "val", "best", "idx", 48]}
extern "C" __global__ void csr_weight_max(const int* row, const int* col, const float* val, float* best, int* idx, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  best[v] = -1e30f;
  idx[v] = -1;
  for (int e = row[v]; e < row[v + 1]; ++e) {
    if (val[e] > best[v]) { best[v] = val[e]; idx[v] = col[e]; }
  }
}
