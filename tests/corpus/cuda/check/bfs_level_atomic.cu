// BFS top-down level step: claim unvisited neighbours with atomicCAS on level[]
// expect: race_free
// why: level[] is read and written only with atomics; the frontier is read-only
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "level": {"dtype": "int32", "data": [0, -1, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1]}, "count": {"dtype": "int32", "shape": [1]}}, "params": ["row", "col", "level", "count", 1, 48]}
extern "C" __global__ void bfs_level_atomic(const int* row, const int* col, int* level, int* count, int cur, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && atomicAdd(&level[v], 0) == cur) {
    for (int e = row[v]; e < row[v + 1]; ++e) {
      if (atomicCAS(&level[col[e]], -1, cur + 1) == -1) atomicAdd(count, 1);
    }
  }
}
