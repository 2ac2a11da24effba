// Relocatable device code (-rdc=true): calls to an extern device function, an extern device
// array of unknown size, visible device functions and a weak template instantiation.
extern __device__ float ext_scale(float x);
extern __device__ int ext_table[];

__device__ __noinline__ float local_helper(float x) { return x * 2.0f + 1.0f; }

template <typename T>
__device__ __noinline__ T clamp_to(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }

extern "C" __global__ void rdc_kernel(float* out, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = ext_scale(local_helper(out[i])) + (float)ext_table[idx[i] & 63];
    out[i] = clamp_to<float>(v, -1.0f, 1.0f) + (float)clamp_to<int>(idx[i], 0, 7);
}
