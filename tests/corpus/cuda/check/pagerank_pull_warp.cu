// PageRank pull step, one warp per vertex: lanes stride over the edges, a shuffle reduction, lane 0 stores
// expect: race_free
// why: only lane 0 of the vertex's warp stores out[v]; the reduction uses __shfl_down_sync over the full warp
// launch: {"grid": [2], "block": [128], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "col": {"dtype": "int32", "data": "@graph48.col"}, "rank": {"dtype": "float32", "shape": [48], "init": "random", "seed": 5}, "out": {"dtype": "float32", "shape": [48]}}, "params": ["row", "col", "rank", "out", 48]}
extern "C" __global__ void pagerank_pull_warp(const int* row, const int* col, const float* rank, float* out, int n) {
  int lane = threadIdx.x % 32;
  int warps = gridDim.x * blockDim.x / 32;
  for (int v = (blockIdx.x * blockDim.x + threadIdx.x) / 32; v < n; v += warps) {
    float s = 0.0f;
    for (int e = row[v] + lane; e < row[v + 1]; e += 32) s += rank[col[e]];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) out[v] = 0.15f + 0.85f * s;
  }
}
