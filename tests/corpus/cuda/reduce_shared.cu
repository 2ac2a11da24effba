// Block reduction: static shared memory, __syncthreads, warp shuffles, vote, min/max.
#define BLOCK 256

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float partial[BLOCK / 32];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if ((tid & 31) == 0) partial[tid >> 5] = v;
    __syncthreads();
    if (tid < 32) {
        v = tid < BLOCK / 32 ? partial[tid] : 0.0f;
        v = warp_sum(v);
        if (tid == 0) out[blockIdx.x] = v;
    }
}

extern "C" __global__ void block_minmax(const int* in, int* out, int n) {
    __shared__ int smin[BLOCK];
    __shared__ int smax[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    int v = i < n ? in[i] : 0;
    smin[tid] = v;
    smax[tid] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smin[tid] = min(smin[tid], smin[tid + s]);
            smax[tid] = max(smax[tid], smax[tid + s]);
        }
        __syncthreads();
    }
    unsigned ballot = __ballot_sync(0xffffffffu, v < 0);
    if (__any_sync(0xffffffffu, v == 42) && tid == 0) out[2] = __popc(ballot);
    if (tid == 0) {
        out[0] = smin[0];
        out[1] = __shfl_sync(0xffffffffu, smax[0], 0);
    }
}
