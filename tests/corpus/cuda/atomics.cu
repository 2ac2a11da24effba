// Atomics on global and shared memory: add, CAS loop, exch, max, inc, float add, 64-bit.
extern "C" __global__ void atomics(int* counters, float* fsum, unsigned long long* big, const float* in, int n) {
    __shared__ int local_hist[32];
    int tid = threadIdx.x;
    if (tid < 32) local_hist[tid] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + tid;
    if (i < n) {
        float v = in[i];
        atomicAdd(&local_hist[((int)v) & 31], 1);
        atomicAdd(fsum, v);
        atomicMax(&counters[1], (int)v);
        atomicInc((unsigned*)&counters[2], 1000u);
        atomicExch(&counters[3], i);
        atomicAdd(big, (unsigned long long)i);
        int old = counters[4], assumed;
        do {
            assumed = old;
            old = atomicCAS(&counters[4], assumed, assumed ^ i);
        } while (old != assumed);
    }
    __syncthreads();
    if (tid < 32) atomicAdd(&counters[8 + tid], local_hist[tid]);
}
