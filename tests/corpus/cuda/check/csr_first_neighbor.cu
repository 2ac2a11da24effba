// first neighbour of each vertex, -1 for a vertex without edges (guard on the degree)
// expect: race_free
// why: col[row[v]] is read only when row[v+1] > row[v]; the last vertex has no edges, so row[47] = nnz and an unguarded read would be one past col's end
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "first": {"dtype": "int32", "shape": [48]}}, "params": ["row", "col", "first", 48]}
extern "C" __global__ void csr_first_neighbor(const int* row, const int* col, int* first, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) {
    int b = row[v], e = row[v + 1];
    int f = -1;
    if (e > b) f = col[b];
    first[v] = f;
  }
}
