// histogram of vertex degrees in shared memory, merged into global memory with atomics
// expect: race_free
// why: bins are updated with shared and global atomics; the shared bins are cleared and read around __syncthreads
// launch: {"grid": [2], "block": [32], "buffers": {"row": {"dtype": "int32", "data": "@graph48.row"}, "hist": {"dtype": "int32", "shape": [8]}}, "params": ["row", "hist", 48]}
extern "C" __global__ void degree_histogram(const int* row, int* hist, int n) {
  __shared__ int bins[8];
  if (threadIdx.x < 8) bins[threadIdx.x] = 0;
  __syncthreads();
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) atomicAdd(&bins[min(row[v + 1] - row[v], 7)], 1);
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&hist[threadIdx.x], bins[threadIdx.x]);
}
