// cooperative-groups grid sync between writing data[i] and reading data[i + 1] (another CTA's element at CTA edges)
// expect: race_free
// why: this_grid().sync() orders every thread's store before every thread's load (a cooperative launch)
// launch: {"grid": [4], "block": [32], "buffers": {"data": {"dtype": "int32", "shape": [128]}, "out": {"dtype": "int32", "shape": [128]}}, "params": ["data", "out"]}
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void grid_sync_ok(int* data, int* out) {
  cg::grid_group g = cg::this_grid();
  unsigned i = g.thread_rank();
  data[i] = (int)i;
  g.sync();
  out[i] = data[(i + 1) % g.size()];
}
