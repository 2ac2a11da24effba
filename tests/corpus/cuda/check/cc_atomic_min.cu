// connected components by label propagation: atomicMin of the neighbour labels
// expect: race_free
// why: labels are read with plain loads only from the read-only input copy and written with atomicMin
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "label_in": {"dtype": "int32", "data": "@graph48.iota"}, "label_out": {"dtype": "int32", "data": "@graph48.iota"}, "changed": {"dtype": "int32", "shape": [1]}}, "params": ["row", "col", "label_in", "label_out", "changed", 48]}
extern "C" __global__ void cc_atomic_min(const int* row, const int* col, const int* label_in, int* label_out, int* changed, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  int mine = label_in[v];
  for (int e = row[v]; e < row[v + 1]; ++e) {
    int u = col[e];
    if (mine < label_in[u]) { atomicMin(&label_out[u], mine); atomicOr(changed, 1); }
  }
}
