// a kernel compiled with __launch_bounds__(128), launched with 256 threads per block
// expect: bad_input
// why: .maxntid 128 forbids a 256-thread block: CUDA refuses the launch (too many resources requested)
// launch: {"grid": [1], "block": [256], "buffers": {"out": {"dtype": "int32", "shape": [256]}}, "params": ["out"]}
extern "C" __global__ void __launch_bounds__(128) launch_bounds_exceeded(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}
