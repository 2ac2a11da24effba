// a warp-tile reduction with cooperative groups: tiled_partition<32>, the tile's shfl_down, block.sync
// expect: race_free
// why: each tile's leader writes its own partial; thread 0 adds them after the block's barrier (-G reads %reserved_smem_offset_1 for the tile)
// launch: {"grid": [1], "block": [128], "buffers": {"x": {"dtype": "float32", "shape": [128], "init": "random", "seed": 14}, "out": {"dtype": "float32", "shape": [1]}}, "params": ["x", "out"]}
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_tile_reduce(const float* x, float* out) {
  __shared__ float part[4];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = x[block.thread_rank()];
  for (int o = tile.size() / 2; o > 0; o >>= 1) v += tile.shfl_down(v, o);
  if (tile.thread_rank() == 0) part[block.thread_rank() / 32] = v;
  block.sync();
  if (block.thread_rank() == 0) out[0] = part[0] + part[1] + part[2] + part[3];
}
