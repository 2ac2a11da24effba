// Calls to non-inlined device functions: .func, call, parameter passing, struct return.
struct Pair { float lo; float hi; };

__device__ __noinline__ float poly(float x, int degree) {
    float r = 1.0f;
    for (int k = 0; k < degree; ++k) r = r * x + (float)k;
    return r;
}

__device__ __noinline__ Pair split(double v) {
    Pair p;
    p.hi = (float)v;
    p.lo = (float)(v - (double)p.hi);
    return p;
}

__device__ __noinline__ void store3(float* out, int i, float a, float b, float c) {
    out[3 * i] = a;
    out[3 * i + 1] = b;
    out[3 * i + 2] = c;
}

extern "C" __global__ void call_kernel(const double* in, float* out, int n, int degree) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Pair p = split(in[i]);
    store3(out, i, poly(p.hi, degree), p.lo, poly(p.lo, degree + 1));
}
