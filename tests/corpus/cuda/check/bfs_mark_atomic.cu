// BFS top-down step with atomicExch to mark neighbours
// expect: race_free
// why: the shared next[u] entries are written by atomics only
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "frontier": {"dtype": "int32", "shape": [48], "init": "ones"}, "next": {"dtype": "int32", "shape": [48]}}, "params": ["row", "col", "frontier", "next", 48]}
extern "C" __global__ void bfs_mark_atomic(const int* row, const int* col, const int* frontier, int* next, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && frontier[v]) {
    for (int e = row[v]; e < row[v + 1]; ++e) atomicExch(&next[col[e]], 1);
  }
}
