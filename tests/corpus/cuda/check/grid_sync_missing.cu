// the same exchange between CTAs without the grid sync
// expect: race
// why: thread 31 of CTA 0 reads data[32], written by thread 0 of CTA 1, with nothing ordering the two
// launch: {"grid": [4], "block": [32], "buffers": {"data": {"dtype": "int32", "shape": [128]}, "out": {"dtype": "int32", "shape": [128]}}, "params": ["data", "out"]}
extern "C" __global__ void grid_sync_missing(int* data, int* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned n = gridDim.x * blockDim.x;
  data[i] = (int)i;
  __syncthreads();
  out[i] = data[(i + 1) % n];
}
