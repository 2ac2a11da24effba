// Plain elementwise kernels: grid-stride loop, float4 vector loads, half and double math.
#include <cuda_fp16.h>

extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void scale4(const float4* __restrict__ in, float4* __restrict__ out, int n4, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];
        out[i] = make_float4(v.x * s, v.y * s, __expf(v.z), rsqrtf(fabsf(v.w) + 1e-6f));
    }
}

extern "C" __global__ void half_relu(const __half* in, __half* out, double* acc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half v = in[i];
        __half z = __float2half(0.0f);
        out[i] = __hgt(v, z) ? v : z;
        acc[i] = sqrt((double)__half2float(v) * 3.0) + (double)i;
    }
}
