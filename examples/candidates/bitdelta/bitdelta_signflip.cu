// BitDelta GEMV (suite contract `bitdelta`): y[o] = scale[o] * sum_k s[o, k] x[k], s = +1 where
// bit k of row o is set, -1 where it is clear (bit k % 8 of byte k / 8, least significant first).
//
// The signs are applied with bit operations on fp16 operands, never with a select or a multiply:
// a lane holds 32 activations of one 32-bit word of signs as 16 fp16 pairs (x[j], x[j + 16]),
// and for pair j the two sign bits j and j + 16 of the inverted word, shifted left by 15 - j,
// land exactly on the two fp16 sign bits (15 and 31): one shift and one lop3 (and, xor) negate
// both halves where their bits are clear. The pair is widened to fp32 and accumulated in fp32, as
// the contract's reference does (products by +-1 are exact).
//
// A CTA of 8 warps owns 16 rows. The K words of a row are cut into chunks of 32 words (1024
// activations); warp w takes chunks w, w + 8, ...; for each chunk a lane loads its 32 activations
// once (four 128-bit loads, rearranged into pairs with prmt) and uses them for all 16 rows, reading
// one coalesced 32-bit word of signs per row. Partial sums are reduced across the warp with
// shfl.sync.bfly and across the 8 warps through 512 bytes of shared memory (one barrier).
// Triton's build for the contract expands every bit with a shift, an and, a compare and a select,
// reloading activations per 8-row block.
//
// Requires KB = ceil(K / 8) (the contract's definition). The word path needs KB % 4 == 0 (Triton's
// build assumes KB % 16 == 0); any other KB takes a byte-by-byte path that is correct but slow.

#include <cstdint>
#include <cuda_fp16.h>

#include "../../common.cuh"

using namespace vk;

namespace {

constexpr int kWarps = 8;
constexpr int kRows = 16;
constexpr int kLanes = 32;

// 32 activations x[k0 .. k0 + 31] as 16 fp16 pairs (x[k0 + j] low, x[k0 + j + 16] high); zeros past K.
__device__ __forceinline__ void load_pairs(const __half* __restrict__ x, int k0, int K, uint32_t (&pair)[16]) {
  uint32_t w[16];  // w[i] = (x[k0 + 2i] low, x[k0 + 2i + 1] high)
  if (k0 + 32 <= K) {
    const uint4* src = reinterpret_cast<const uint4*>(x + k0);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const uint4 v = __ldg(src + q);
      w[4 * q] = v.x; w[4 * q + 1] = v.y; w[4 * q + 2] = v.z; w[4 * q + 3] = v.w;
    }
  } else {
    const unsigned short* xs = reinterpret_cast<const unsigned short*>(x);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const uint32_t lo = k0 + 2 * i < K ? xs[k0 + 2 * i] : 0u;
      const uint32_t hi = k0 + 2 * i + 1 < K ? xs[k0 + 2 * i + 1] : 0u;
      w[i] = lo | (hi << 16);
    }
  }
  pairs_j_j16(w, pair);
}

// sum_j s_j x_j over one word of signs, fp32 accumulation.
__device__ __forceinline__ float signed_sum(uint32_t bits, const uint32_t (&pair)[16]) {
#ifdef BUG_SIGN_NOT_INVERTED
  const uint32_t neg = bits;   // bug: negates where the bit is SET
#else
  const uint32_t neg = ~bits;  // a clear bit negates
#endif
  float acc = 0.f;
#ifdef BUG_FP16_ACCUMULATION
  __half2 h = __float2half2_rn(0.f);
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const uint32_t v = pair[j] ^ ((neg << (15 - j)) & 0x80008000u);
    h = __hadd2(h, *reinterpret_cast<const __half2*>(&v));  // bug: fp16 partial sums
  }
  const float2 f = __half22float2(h);
  acc = f.x + f.y;
#else
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const uint32_t v = pair[j] ^ ((neg << (15 - j)) & 0x80008000u);  // sign bits j -> 15, j + 16 -> 31
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&v));
    acc += f.x;
    acc += f.y;
  }
#endif
  return acc;
}

}  // namespace

// The entry has the name of Triton's kernel for the contract (the evaluation harness requires it).
extern "C" __global__ void __launch_bounds__(kWarps * kLanes)
bitdelta_gemv_kernel(const uint8_t* __restrict__ packed, const __half* __restrict__ scale,
                     const __half* __restrict__ x, __half* __restrict__ y, int O, int K, int KB,
                     const void* /*global scratch*/, const void* /*profile scratch*/) {
  __shared__ float part[kWarps][kRows];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int row0 = blockIdx.x * kRows;
  const int nrows = min(kRows, O - row0);
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.f;

  if ((KB & 3) == 0) {
    const int words = KB >> 2;
    const uint32_t* rows = reinterpret_cast<const uint32_t*>(packed) + static_cast<size_t>(row0) * words;
    for (int c = warp * kLanes; c < words; c += kWarps * kLanes) {
      const int wi = c + lane;
      if (wi < words) {
        uint32_t pair[16];
        load_pairs(x, 32 * wi, K, pair);
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          if (r < nrows) acc[r] += signed_sum(__ldg(rows + static_cast<size_t>(r) * words + wi), pair);
      }
    }
  } else {  // KB not a multiple of 4: bytes, one activation at a time
    for (int b = threadIdx.x; b < KB; b += kWarps * kLanes) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r < nrows) {
          const uint32_t byte = packed[static_cast<size_t>(row0 + r) * KB + b];
          for (int i = 0; i < 8 && 8 * b + i < K; ++i) {
            const float xv = __half2float(x[8 * b + i]);
            acc[r] += (byte >> i) & 1u ? xv : -xv;
          }
        }
      }
    }
  }

#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0) part[warp][r] = v;
  }
  __syncthreads();
  if (threadIdx.x < nrows) {
    float dot = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) dot += part[w][threadIdx.x];
    const int o = row0 + threadIdx.x;
    y[o] = __float2half_rn(__half2float(scale[o]) * dot);
  }
}
