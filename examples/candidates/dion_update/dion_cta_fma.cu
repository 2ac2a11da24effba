// Dion power-iteration step (suite contract `dion_update`), one matrix per CTA, fp32 FMA
// throughout: P = M Q; P^ = P / (||P[:, c]|| + eps); R = M^T P^; Q' = R / (||R[:, c]|| + eps).
// Outputs p = P^, r = R, q_out = Q'. Rank 32 (the contract's RANK constexpr, as Triton's build).
//
// Why faster than Triton's build at the bench shape (64 matrices of 1024 x 1024): both run one CTA
// per matrix (64 of the H200's 132 SMs) and both are fp32-FMA bound (2 x 1024 x 1024 x 32 FMAs per
// matrix); Triton's build runs 4 warps per matrix, which cannot keep an SM's FMA pipes and loads
// busy, while this runs 16 warps (512 threads, one CTA per SM) with M staged through shared memory
// by 16-byte cp.async copies, so that each thread's FMAs take one operand from a register and the other from a
// broadcast shared-memory read:
//   (A) each thread owns two rows of P (64 accumulators); per step a 1024 x 32 tile of M (rows
//       padded to 36 floats: conflict-free float4 reads) and the matching 32 x 32 tile of Q;
//   (B) each thread owns two columns of R; per step a 16 x 1024 tile of M and the 16 x 32 tile of P^.
// Column norms: per-thread partial sums, warp butterflies, then the 16 warps' sums in a fixed order
// (deterministic); sqrt and division correctly rounded (sqrt.rn, div.rn) as in the contract.
// Any M and N: row/column blocks of 1024, only the rows and columns inside M staged and multiplied
// (columns zero-filled to the step's width); 16-byte staging needs N % 4 == 0, otherwise scalar loads.

#include <cstdint>

#include "../../common.cuh"

using namespace vk;

namespace {

constexpr int kRank = 32;
constexpr int kThreads = 512, kWarps = kThreads / 32;
constexpr int kRowsA = 2 * kThreads;  // rows of P per pass-A block (two per thread)
constexpr int kTN = 32;               // columns of M per pass-A step
constexpr int kLd = kTN + 4;          // padded row of the pass-A tile
constexpr int kColsB = 2 * kThreads;  // columns of R per pass-B block (two per thread)
constexpr int kTM = 16;               // rows of M per pass-B step
// shared memory (floats): tile | q or P^ tile | warp partials | sums of squares | inverse norms: kSharedBytes
constexpr int kTile = kRowsA * kLd;   // >= kTM * kColsB
constexpr int kSmall = kTN * kRank;   // >= kTM * kRank
constexpr int kSharedBytes = 4 * (kTile + kSmall + kWarps * kRank + 2 * kRank);
static_assert(kSharedBytes == 153856, "the launch header's shared= (examples/kernels.toml)");

__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool valid) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// out[c] += sum over the CTA's threads of v[c] (fixed order); v is clobbered
__device__ __forceinline__ void block_colsum(float (&v)[kRank], float* red, float* out) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int c = 0; c < kRank; ++c) v[c] = warp_sum(v[c]);
  if (lane == 0) {
#pragma unroll
    for (int c = 0; c < kRank; ++c) red[warp * kRank + c] = v[c];
  }
  __syncthreads();
  if (threadIdx.x < kRank) {
    float s = 0.f;
    for (int w = 0; w < kWarps; ++w) s += red[w * kRank + threadIdx.x];
    out[threadIdx.x] += s;
  }
  __syncthreads();
}

}  // namespace

// The entry has the name of Triton's kernel for the contract (the evaluation harness requires it).
extern "C" __global__ void __launch_bounds__(kThreads, 1)
dion_update_kernel(const float* __restrict__ mom, const float* __restrict__ q_in, float* __restrict__ p,
                   float* __restrict__ r, float* __restrict__ q_out, int Mr, int Nc, float eps,
                   const void* /*global scratch*/, const void* /*profile scratch*/) {
  extern __shared__ float4 dyn[];
  float* tile = reinterpret_cast<float*>(dyn);
  float* small = tile + kTile;
  float* red = small + kSmall;
  float* sq = red + kWarps * kRank;  // [0, 32): ||P||^2 then 1 / (||P|| + eps); [32, 64): the same for R
  const int tid = threadIdx.x;
  const size_t mat = blockIdx.x;
  const float* M = mom + mat * Mr * Nc;
  const float* Q = q_in + mat * Nc * kRank;
  float* P = p + mat * Mr * kRank;
  float* R = r + mat * Nc * kRank;
  float* Qo = q_out + mat * Nc * kRank;
  const bool vec = (Nc & 3) == 0;
  if (tid < 2 * kRank) sq[tid] = 0.f;

  // ---- (A) P = M Q, raw into p; column sums of squares
  for (int mb = 0; mb < Mr; mb += kRowsA) {
    const int rows = min(kRowsA, Mr - mb);  // rows of this block: only these are staged and multiplied
    const bool has0 = tid < rows, has1 = tid + kThreads < rows;
    float a0[kRank], a1[kRank];
#pragma unroll
    for (int c = 0; c < kRank; ++c) a0[c] = a1[c] = 0.f;
    for (int nb = 0; nb < Nc; nb += kTN) {
      __syncthreads();  // the previous step's reads of the tiles are done
      if (vec) {
        for (int i = tid; i < rows * (kTN / 4); i += kThreads) {  // 16 copies in flight per thread
          const int row = i / (kTN / 4), u = i % (kTN / 4), m = mb + row, n = nb + 4 * u;
          const bool ok = n < Nc;
          cp_async16(tile + row * kLd + 4 * u, ok ? M + static_cast<size_t>(m) * Nc + n : M, ok);
        }
      } else {
        for (int i = tid; i < rows * kTN; i += kThreads) {
          const int row = i / kTN, k = i % kTN, m = mb + row, n = nb + k;
          tile[row * kLd + k] = n < Nc ? M[static_cast<size_t>(m) * Nc + n] : 0.f;
        }
      }
      if (tid < kTN * kRank / 4) {  // Q rows nb .. nb + 31 (128-byte rows)
        const int k = tid / (kRank / 4), u = tid % (kRank / 4), n = nb + k;
        cp_async16(small + k * kRank + 4 * u, n < Nc ? Q + static_cast<size_t>(n) * kRank + 4 * u : Q, n < Nc);
      }
      cp_async_wait_all();
      __syncthreads();
      const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 1
      for (int k = 0; has0 && k < kTN; k += 4) {
        const float4 x0 = *reinterpret_cast<const float4*>(tile + tid * kLd + k);
        const float4 x1 = has1 ? *reinterpret_cast<const float4*>(tile + (tid + kThreads) * kLd + k) : zero;
        const float e0[4] = {x0.x, x0.y, x0.z, x0.w}, e1[4] = {x1.x, x1.y, x1.z, x1.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#pragma unroll
          for (int c = 0; c < kRank; c += 4) {
            const float4 q = *reinterpret_cast<const float4*>(small + (k + j) * kRank + c);
            a0[c] = fmaf(e0[j], q.x, a0[c]), a0[c + 1] = fmaf(e0[j], q.y, a0[c + 1]);
            a0[c + 2] = fmaf(e0[j], q.z, a0[c + 2]), a0[c + 3] = fmaf(e0[j], q.w, a0[c + 3]);
            a1[c] = fmaf(e1[j], q.x, a1[c]), a1[c + 1] = fmaf(e1[j], q.y, a1[c + 1]);
            a1[c + 2] = fmaf(e1[j], q.z, a1[c + 2]), a1[c + 3] = fmaf(e1[j], q.w, a1[c + 3]);
          }
        }
      }
    }
    const int m0 = mb + tid, m1 = mb + tid + kThreads;
#pragma unroll
    for (int c = 0; c < kRank; c += 4) {
      if (m0 < Mr) *reinterpret_cast<float4*>(P + static_cast<size_t>(m0) * kRank + c) =
          make_float4(a0[c], a0[c + 1], a0[c + 2], a0[c + 3]);
      if (m1 < Mr) *reinterpret_cast<float4*>(P + static_cast<size_t>(m1) * kRank + c) =
          make_float4(a1[c], a1[c + 1], a1[c + 2], a1[c + 3]);
    }
#pragma unroll
    for (int c = 0; c < kRank; ++c) a0[c] = a0[c] * a0[c] + a1[c] * a1[c];  // rows past Mr hold 0
    block_colsum(a0, red, sq);
  }
  if (tid < kRank) sq[tid] = __fdiv_rn(1.f, __fsqrt_rn(sq[tid]) + eps);
  __syncthreads();  // the inverse norms, and every row of raw P in p, are visible to the CTA

  // ---- (B) R = M^T P^, raw into r; column sums of squares
  for (int nb = 0; nb < Nc; nb += kColsB) {
    const int cols = min(kColsB, Nc - nb), units = (cols + 3) / 4;  // columns of this block (16-byte units)
    const bool has0 = tid < cols, has1 = tid + kThreads < cols;
    float b0[kRank], b1[kRank];
#pragma unroll
    for (int c = 0; c < kRank; ++c) b0[c] = b1[c] = 0.f;
    for (int mb = 0; mb < Mr; mb += kTM) {
      const int rows = min(kTM, Mr - mb);
      __syncthreads();
      if (vec) {
        for (int i = tid; i < rows * units; i += kThreads) {  // 8 copies in flight per thread
          const int row = i / units, u = i % units, m = mb + row, n = nb + 4 * u;
          const bool ok = n < Nc;
          cp_async16(tile + row * kColsB + 4 * u, ok ? M + static_cast<size_t>(m) * Nc + n : M, ok);
        }
      } else {
        for (int i = tid; i < rows * cols; i += kThreads) {
          const int row = i / cols, k = i % cols, m = mb + row, n = nb + k;
          tile[row * kColsB + k] = M[static_cast<size_t>(m) * Nc + n];
        }
      }
      if (tid < rows * kRank) {  // P^ rows mb .. mb + rows - 1
        const int row = tid / kRank, c = tid % kRank, m = mb + row;
        small[tid] = P[static_cast<size_t>(m) * kRank + c] * sq[c];
      }
      cp_async_wait_all();
      __syncthreads();
#pragma unroll 4
      for (int i = 0; has0 && i < rows; ++i) {
        const float x0 = tile[i * kColsB + tid], x1 = has1 ? tile[i * kColsB + tid + kThreads] : 0.f;
#pragma unroll
        for (int c = 0; c < kRank; c += 4) {
          const float4 q = *reinterpret_cast<const float4*>(small + i * kRank + c);
          b0[c] = fmaf(x0, q.x, b0[c]), b0[c + 1] = fmaf(x0, q.y, b0[c + 1]);
          b0[c + 2] = fmaf(x0, q.z, b0[c + 2]), b0[c + 3] = fmaf(x0, q.w, b0[c + 3]);
          b1[c] = fmaf(x1, q.x, b1[c]), b1[c + 1] = fmaf(x1, q.y, b1[c + 1]);
          b1[c + 2] = fmaf(x1, q.z, b1[c + 2]), b1[c + 3] = fmaf(x1, q.w, b1[c + 3]);
        }
      }
    }
    const int n0 = nb + tid, n1 = nb + tid + kThreads;
#pragma unroll
    for (int c = 0; c < kRank; c += 4) {
      if (n0 < Nc) *reinterpret_cast<float4*>(R + static_cast<size_t>(n0) * kRank + c) =
          make_float4(b0[c], b0[c + 1], b0[c + 2], b0[c + 3]);
      if (n1 < Nc) *reinterpret_cast<float4*>(R + static_cast<size_t>(n1) * kRank + c) =
          make_float4(b1[c], b1[c + 1], b1[c + 2], b1[c + 3]);
    }
#pragma unroll
    for (int c = 0; c < kRank; ++c) b0[c] = b0[c] * b0[c] + b1[c] * b1[c];  // columns past Nc hold 0
    block_colsum(b0, red, sq + kRank);
  }
  if (tid < kRank) sq[kRank + tid] = __fdiv_rn(1.f, __fsqrt_rn(sq[kRank + tid]) + eps);
  __syncthreads();  // every read of raw P and write of r is done

  // ---- (C) p <- P^ in place; Q' = R / (||R|| + eps)
  for (int i = tid; i < Mr * kRank; i += kThreads) P[i] *= sq[i % kRank];
#ifdef BUG_Q_UNNORMALISED
  for (int i = tid; i < Nc * kRank; i += kThreads) Qo[i] = R[i];  // bug: Q' = R (its norms never applied)
#else
  for (int i = tid; i < Nc * kRank; i += kThreads) Qo[i] = R[i] * sq[kRank + i % kRank];
#endif
}
