// a kernel compiled with __launch_bounds__(128), launched with 128 threads per block
// expect: race_free
// why: each thread writes its own element; the block respects .maxntid 128
// launch: {"grid": [2], "block": [128], "buffers": {"out": {"dtype": "int32", "shape": [256]}}, "params": ["out"]}
extern "C" __global__ void __launch_bounds__(128) launch_bounds_ok(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}
