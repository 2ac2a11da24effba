"""Generate the block-scaled mma equivalence cases."""
from pathlib import Path

LAUNCH = ('{"grid": [1], "block": [32], "buffers": {'
          '"a": {"dtype": "float8_e4m3", "shape": [512], "init": "random"}, '
          '"b": {"dtype": "float8_e4m3", "shape": [256], "init": "random", "seed": 3}, '
          '"sa": {"dtype": "uint8", "shape": [128], "init": "random", "seed": 5, "draw_range": [120, 134]}, '
          '"sb": {"dtype": "uint8", "shape": [128], "init": "random", "seed": 7, "draw_range": [120, 134]}, '
          '"out": {"dtype": "float32", "shape": [128]}}, "params": ["a", "b", "sa", "sb", "out"]}')
MMA = "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0"


def body(mma_lines: list[str], extra_regs: str = "") -> str:
    lines = [".version 8.8", ".target sm_120a", ".address_size 64", "",
             ".visible .entry bsmma(.param .u64 pa, .param .u64 pb, .param .u64 psa, .param .u64 psb, .param .u64 pout)",
             "{",
             "\t.reg .b32 %a<4>, %b<2>, %sa, %sb, %t, %x<4>;",
             "\t.reg .f32 %f0, %d<4>, %e<4>;",
             "\t.reg .b64 %rd<16>;" + extra_regs,
             "\tld.param.u64 %rd1, [pa];", "\tld.param.u64 %rd2, [pb];", "\tld.param.u64 %rd3, [psa];",
             "\tld.param.u64 %rd4, [psb];", "\tld.param.u64 %rd5, [pout];",
             "\tmov.u32 %t, %tid.x;",
             "\tmul.wide.u32 %rd6, %t, 16;", "\tadd.s64 %rd7, %rd1, %rd6;",
             "\tmul.wide.u32 %rd8, %t, 8;", "\tadd.s64 %rd9, %rd2, %rd8;",
             "\tmul.wide.u32 %rd10, %t, 4;", "\tadd.s64 %rd11, %rd3, %rd10;", "\tadd.s64 %rd12, %rd4, %rd10;",
             "\tmul.wide.u32 %rd13, %t, 16;", "\tadd.s64 %rd14, %rd5, %rd13;",
             "\tld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd7];",
             "\tld.global.v2.b32 {%b0, %b1}, [%rd9];",
             "\tld.global.b32 %sa, [%rd11];", "\tld.global.b32 %sb, [%rd12];",
             "\tmov.f32 %f0, 0f00000000;"]
    lines += ["\t" + l for l in mma_lines]
    lines += ["\tst.global.v4.f32 [%rd14], {%d0, %d1, %d2, %d3};", "\tret;", "}", ""]
    return "\n".join(lines)


def mma(d: str, a: str, c: str, sa: str, sel_a: str, sb: str, sel_b: str) -> str:
    return f"{MMA} {{{d}}}, {{{a}}}, {{%b0, %b1}}, {{{c}}}, {sa}, {sel_a}, {sb}, {sel_b};"


D, E, A4, F4 = "%d0, %d1, %d2, %d3", "%e0, %e1, %e2, %e3", "%a0, %a1, %a2, %a3", "%f0, %f0, %f0, %f0"
CASES = {
    "bsmma_ref": ("// reference of the block-scaled mma cases: one warp, D = (A * 2^(SA-127)) (B * 2^(SB-127)) "
                  "(mma.sync m16n8k32 .kind::mxf8f6f4.block_scale, e4m3, ue8m0 scales, PTX 9.7.14.3), C = 0; lane t "
                  "holds its A, B and scale fragments at a[16t], b[8t], sa[4t], sb[4t] and writes out[4t]",
                  [mma(D, A4, F4, "%sa", "{0, 0}", "%sb", "{0, 0}")], ""),
    "bsmma_shifted_scale": ("// expect: verified\n// why: the scale-a word shifted left by a byte and read with "
                            "byte-id-a 1: the same scale bytes\n// reference: bsmma_ref.ptx",
                            ["shl.b32 %x0, %sa, 8;", mma(D, A4, F4, "%x0", "{1, 0}", "%sb", "{0, 0}")], ""),
    "bsmma_split_k": ("// expect: verified\n// why: K split in two block-scaled mmas (A's registers 0-1 hold K 0-15, "
                      "2-3 hold K 16-31; the other half zero), the first's D the second's C: the same real sum\n"
                      "// reference: bsmma_ref.ptx",
                      ["mov.b32 %x0, 0;",
                       mma(E, "%a0, %a1, %x0, %x0", F4, "%sa", "{0, 0}", "%sb", "{0, 0}"),
                       mma(D, "%x0, %x0, %a2, %a3", E, "%sa", "{0, 0}", "%sb", "{0, 0}")], ""),
    "bsmma_wrong_scale_byte": ("// expect: not_equivalent\n// why: seeded bug (wrong scale index): scale-a read from "
                               "byte 1 of its word (byte-id-a 1) where the reference reads byte 0\n"
                               "// reference: bsmma_ref.ptx",
                               [mma(D, A4, F4, "%sa", "{1, 0}", "%sb", "{0, 0}")], ""),
    "bsmma_swapped_scales": ("// expect: not_equivalent\n// why: seeded bug (swapped scales): A scaled by B's scale "
                             "word and B by A's\n// reference: bsmma_ref.ptx",
                             [mma(D, A4, F4, "%sb", "{0, 0}", "%sa", "{0, 0}")], ""),
}
out = Path("tests/equivalence/cases")
for name, (head, lines, extra) in CASES.items():
    (out / f"{name}.ptx").write_text(f"{head}\n// launch: {LAUNCH}\n{body(lines, extra)}")
