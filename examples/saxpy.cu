// y = a * x + y, one thread per element, the usual CUDA bounds guard.
// saxpy_oob has the classic off-by-one guard (i <= n): the thread with i == n reads and writes
// one element past the end of x and y.
// PTX: nvcc -arch=sm_80 -lineinfo -ptx examples/saxpy.cu -o examples/saxpy.ptx (CUDA 13.0), with
// the .file path made relative to the repository root.
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void saxpy_oob(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = a * x[i] + y[i];
}
