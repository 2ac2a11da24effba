// RMSNorm (suite contract `rmsnorm`): y[m, :] = x[m, :] / sqrt(mean(x[m, :]^2) + eps) * w, fp16
// storage, fp32 statistics. One warp per row, the row held in registers as packed fp16 pairs.
//
// Fast path (N a multiple of 8 and N <= 8192, which covers Triton's bench build): each lane loads
// its 32 slots of 8 fp16 values with 128-bit loads (slot j holds columns 256 j + 8 lane .. + 7),
// the sum of squares is reduced across the warp with shfl.sync.bfly (no shared memory, no
// barrier), and the lane writes its slots back with 128-bit stores, reading w (the same for every
// row, so cached) with 128-bit loads. One read and one write of the row. Triton's build for the
// contract spreads a row over 8 warps and combines their partial sums through shared memory.
// Any other N: the same warp streams the row twice with scalar accesses.

#include <cstdint>
#include <cuda_fp16.h>

#include "../../common.cuh"

using namespace vk;

namespace {

constexpr int kLanes = 32;
constexpr int kSlots = 32;                     // 8-wide fp16 slots per lane on the fast path
constexpr int kMaxFastN = kLanes * kSlots * 8; // 8192

__device__ __forceinline__ float2 f2(uint32_t h2) { return __half22float2(*reinterpret_cast<const __half2*>(&h2)); }

__device__ __forceinline__ uint32_t h2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

}  // namespace

// The entry has the name of Triton's kernel for the contract (the evaluation harness requires it).
extern "C" __global__ void __launch_bounds__(32)
rmsnorm_kernel(const __half* __restrict__ x, const __half* __restrict__ w, __half* __restrict__ y, int N,
               float eps, const void* /*global scratch*/, const void* /*profile scratch*/) {
  const int lane = threadIdx.x;
  const size_t base = static_cast<size_t>(blockIdx.x) * static_cast<unsigned>(N);
  const __half* xr = x + base;
  __half* yr = y + base;

  if ((N & 7) == 0 && N <= kMaxFastN) {
    uint4 v[kSlots];
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < kSlots; ++j) {
      const int c = (j * kLanes + lane) * 8;
      if (c < N) {
        v[j] = *reinterpret_cast<const uint4*>(xr + c);
        const float2 a = f2(v[j].x), b = f2(v[j].y), d = f2(v[j].z), e = f2(v[j].w);
        ss += ((a.x * a.x + a.y * a.y) + (b.x * b.x + b.y * b.y)) + ((d.x * d.x + d.y * d.y) + (e.x * e.x + e.y * e.y));
      }
    }
    const float inv = rsqrt_approx(warp_sum(ss) / static_cast<float>(N) + eps);
#pragma unroll
    for (int j = 0; j < kSlots; ++j) {
      const int c = (j * kLanes + lane) * 8;
      if (c < N) {
        const uint4 wv = __ldg(reinterpret_cast<const uint4*>(w + c));
        const uint32_t xs[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
        const uint32_t ws[4] = {wv.x, wv.y, wv.z, wv.w};
        uint32_t o[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float2 a = f2(xs[q]), b = f2(ws[q]);
          o[q] = h2(a.x * inv * b.x, a.y * inv * b.y);
        }
        *reinterpret_cast<uint4*>(yr + c) = make_uint4(o[0], o[1], o[2], o[3]);
      }
    }
    return;
  }

  float ss = 0.f;
  for (int c = lane; c < N; c += kLanes) {
    const float a = __half2float(xr[c]);
    ss += a * a;
  }
  const float inv = rsqrt_approx(warp_sum(ss) / static_cast<float>(N) + eps);
  for (int c = lane; c < N; c += kLanes)
    yr[c] = __float2half_rn(__half2float(xr[c]) * inv * __half2float(w[c]));
}
