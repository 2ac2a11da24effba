// Naive direct convolution, fp32: y[f, p, q] = sum_{c, r, s} x[c, p - 1 + r, q - 1 + s] w[f, c, r, s]
// for x [C, H, W], w [F, C, 3, 3], y [F, H, W] (one image, stride 1, zero padding 1). One thread per
// output, the loop nest c, r, s, skipping taps outside the image. The reference side of the
// paper-style pair with fast.cu.

extern "C" __global__ void __launch_bounds__(256)
conv_naive(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int C, int H, int W, int F) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  const int p = blockIdx.y * blockDim.y + threadIdx.y;
  const int f = blockIdx.z;
  if (p >= H || q >= W) return;
  float acc = 0.f;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) {
        const int ih = p - 1 + r, iw = q - 1 + s;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          acc = fmaf(x[(static_cast<size_t>(c) * H + ih) * W + iw], w[((static_cast<size_t>(f) * C + c) * 3 + r) * 3 + s], acc);
      }
  y[(static_cast<size_t>(f) * H + p) * W + q] = acc;
}
