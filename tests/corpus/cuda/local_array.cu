// Per-thread arrays indexed dynamically: .local memory, local loads/stores, a sort.
extern "C" __global__ void local_sort(const int* in, int* out, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int buf[24];
    for (int j = 0; j < 24; ++j) buf[j] = in[(i * 24 + j * 7) % n];
    for (int a = 1; a < 24; ++a) {
        int v = buf[a];
        int b = a - 1;
        while (b >= 0 && buf[b] > v) { buf[b + 1] = buf[b]; --b; }
        buf[b + 1] = v;
    }
    out[i] = buf[k % 24];
}
