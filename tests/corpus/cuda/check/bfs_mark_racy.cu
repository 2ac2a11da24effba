// BFS top-down step: every frontier vertex marks its neighbours in next[] with plain stores
// expect: race
// why: vertices 0 and 3 both have neighbour 27 (and others): threads of different warps store 1 to the same next[u] with no synchronisation; equal values from different threads are still a data race
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "frontier": {"dtype": "int32", "shape": [48], "init": "ones"}, "next": {"dtype": "int32", "shape": [48]}}, "params": ["row", "col", "frontier", "next", 48]}
extern "C" __global__ void bfs_mark_racy(const int* row, const int* col, const int* frontier, int* next, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && frontier[v]) {
    for (int e = row[v]; e < row[v + 1]; ++e) next[col[e]] = 1;
  }
}
