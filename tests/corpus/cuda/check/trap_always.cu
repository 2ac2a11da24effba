// a kernel that stores and then traps unconditionally
// expect: trap
// why: every thread executes __trap(): the launch fails with an error
// launch: {"grid": [1], "block": [32], "buffers": {"out": {"dtype": "int32", "shape": [32]}}, "params": ["out"]}
extern "C" __global__ void trap_always(int* out) {
  out[threadIdx.x] = 1;
  __trap();
}
