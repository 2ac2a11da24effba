// first neighbour of each vertex without the degree guard
// expect: out_of_bounds
// why: the last vertex has no edges: row[47] = nnz = 105, and col[105] is one past the end of col
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "first": {"dtype": "int32", "shape": [48]}}, "params": ["row", "col", "first", 48]}
extern "C" __global__ void csr_first_neighbor_unguarded(const int* row, const int* col, int* first, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) first[v] = col[row[v]];
}
