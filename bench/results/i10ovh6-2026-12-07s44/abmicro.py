"""abmicro.py N: tracker-level A/B in one process. Run from a tree holding symexec/check/_shadow_base.py (base's
shadow.py) beside the branch's shadow.py. Per case: begin, operand reads, result write; least process time of
rounds that alternate A and B."""
import sys, time
sys.path.insert(0, '.')
import numpy as np
import ptx_parser
from symexec import load_program
from symexec.check import shadow as B
from symexec.check import _shadow_base as A
src = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(){
 .reg .b32 %r<10>; .reg .f32 %f<10>;
 shr.u32 %r1, %r2, 4;
 and.b32 %r1, %r2, %r3;
 fma.rn.f32 %f1, %f2, %f3, %f4;
 prmt.b32 %r1, %r2, %r3, 0x5140;
 add.s32 %r1, %r2, %r3;
 mul.f32 %f1, %f2, %f3;
 cvt.rn.f16.s32 %r1, %r2;
 ret;
}
"""
prog = load_program(ptx_parser.parse(src, "m.ptx"), "k")
inss = [i for i in prog.code if hasattr(i, 'opcode')][:7]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 256
rng = np.random.default_rng(0)
def setup(mod):
    t = mod.Tracker(n)
    rng = np.random.default_rng(7)
    for r in ("%r2", "%r3", "%f2", "%f3", "%f4"):
        t.reg_hash[r] = rng.integers(0, 2**63, n, dtype=np.uint64)
        t.reg_real[r] = t.reg_hash[r]
        t.reg_taint[r] = np.full(n, 1, np.uint8)
    return t
val = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
mask = np.ones(n, bool)
cases = [(inss[0], ["%r2"], 4), (inss[1], ["%r2", "%r3"], None), (inss[2], ["%f2", "%f3", "%f4"], None),
         (inss[3], ["%r2", "%r3"], 0x5140), (inss[4], ["%r2", "%r3"], None), (inss[5], ["%f2", "%f3"], None),
         (inss[6], ["%r2"], None)]
def run(t, ins, srcs, imm, reps):
    imm = None if imm is None else np.uint32(imm)
    t0 = time.process_time()
    for _ in range(reps):
        t.begin(ins)
        for s in srcs:
            t.on_read_reg(s, val, 32)
        if imm is not None:
            t.on_read_const(imm, 32)
        t.on_write_reg("%r9", val, 32, mask, True)
    return (time.process_time() - t0) / reps
ta, tb = setup(A), setup(B)
# same numbers?
for ins, srcs, imm in cases:
    run(ta, ins, srcs, imm, 1); run(tb, ins, srcs, imm, 1)
    assert np.array_equal(ta.reg_hash["%r9"], tb.reg_hash["%r9"]) and np.array_equal(ta.reg_real["%r9"], tb.reg_real["%r9"]), ins.name
best = {}
for r in range(int(sys.argv[1])):
    for side, t in (("A", ta), ("B", tb)) if r % 2 == 0 else (("B", tb), ("A", ta)):
        for ins, srcs, imm in cases:
            v = run(t, ins, srcs, imm, 300)
            k = (ins.name, side)
            best[k] = min(best.get(k, 1e9), v)
tot = {"A": 0, "B": 0}
for ins, _, _ in cases:
    a, b = best[(ins.name, "A")], best[(ins.name, "B")]
    tot["A"] += a; tot["B"] += b
    print(f"{ins.name:18s} base {a*1e6:6.1f} us  branch {b*1e6:6.1f} us  {b/a:.3f}")
print(f"{'sum':18s} base {tot['A']*1e6:6.1f} us  branch {tot['B']*1e6:6.1f} us  {tot['B']/tot['A']:.3f}")
