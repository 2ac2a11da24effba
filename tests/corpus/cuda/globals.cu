// Module-scope variables with initialisers: __constant__ tables, __device__ arrays, a global
// array of pointers (generic() address initialisers), a struct, and dynamic extern __shared__.
struct Params { int n; float scale; short tag[3]; };

__constant__ float coeffs[8] = {1.0f, 0.5f, 0.25f, 0.125f, -1.0f, 3.5f, 1e-3f, 2.0f};
__constant__ Params params = {64, 0.75f, {1, 2, 3}};
__device__ int table_a[4] = {10, 20, 30, 40};
__device__ int table_b[4] = {-1, -2, -3, -4};
__device__ int* tables[2] = {table_a, table_b + 1};
__device__ double dconst = 2.718281828459045;
__device__ unsigned long long counter;
__device__ const char greeting[] = "volta";

extern "C" __global__ void use_globals(float* out, int which) {
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    dyn[t] = coeffs[t & 7] * params.scale + (float)tables[which & 1][t & 3] + (float)params.tag[t % 3];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = dyn[(t + 1) % blockDim.x] + (float)dconst + (float)greeting[t % 5];
    if (t == 0) atomicAdd(&counter, 1ull);
}
