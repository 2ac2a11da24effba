"""abmicro.py BASE_TREE ROUNDS [N]: tracker cycles (begin, operand reads, result write) of base's shadow.py (A, loaded
from BASE_TREE/symexec/check/shadow.py as a module beside the branch's) and the branch's (B), alternating; least
process time per case; numbers asserted equal. Cases: fma/mul/add with every input tainted, setp with an
immediate, a v4 load of whole values (ld.shared) and of untouched input bytes with some lanes masked off."""
import sys, time, importlib.util
sys.path.insert(0, '.')
import numpy as np
import ptx_parser
from symexec import load_program
from symexec.check import shadow as B
spec = importlib.util.spec_from_file_location("symexec.check._shadow_base", sys.argv[1] + "/symexec/check/shadow.py")
A = importlib.util.module_from_spec(spec); sys.modules[spec.name] = A; spec.loader.exec_module(A)
rounds = int(sys.argv[2]); n = int(sys.argv[3]) if len(sys.argv) > 3 else 256
src = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(){
 .reg .b32 %r<10>; .reg .f32 %f<10>; .reg .pred %p<3>; .reg .b64 %rd<3>;
 fma.rn.f32 %f1, %f2, %f3, %f4;
 mul.f32 %f1, %f2, %f3;
 add.f32 %f1, %f2, %f3;
 setp.lt.f32 %p1, %f2, 0f00000000;
 ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
 ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
 ret;
}
"""
prog = load_program(ptx_parser.parse(src, "m.ptx"), "k")
code = prog.code
rng = np.random.default_rng(7)
val = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
full = np.ones(n, bool)
part = full.copy(); part[n - n // 8:] = False
H = {r: rng.integers(0, 2**63, n, dtype=np.uint64) for r in ("%f2", "%f3", "%f4")}
R = {r: rng.integers(0, 2**63, n, dtype=np.uint64) for r in ("%f2", "%f3", "%f4")}
whole = np.repeat(rng.integers(0, 2**63, (n, 4), dtype=np.uint64), 4, axis=1)
wpos = np.tile(np.array([0x20, 0x21, 0x22, 0x23], np.uint8), (n, 4))
raw = rng.integers(0, 2**63, (n, 16), dtype=np.uint64)
rpos = np.full((n, 16), 0xFF, np.uint8)
rt = np.where(part[:, None], np.uint8(1), np.uint8(0)) * np.ones((1, 16), np.uint8)


def setup(mod):
    t = mod.Tracker(n)
    for r in H:
        t.reg_hash[r] = H[r]; t.reg_real[r] = R[r]; t.reg_taint[r] = np.full(n, 1, np.uint8)
    return t


def arith(ins, srcs, imm):
    def go(t):
        t.begin(ins)
        for s in srcs:
            t.on_read_reg(s, val, 32)
        if imm is not None:
            t.on_read_const(np.uint32(imm), 32)
        t.on_write_reg("%r9", val, 32, full, True)
        return [(t.reg_hash["%r9"], t.reg_real["%r9"], t.reg_taint["%r9"])]
    return go


def load(ins, bh, bp, bt, mask):
    isfull = bool(mask.all())
    def go(t):
        t.begin(ins)
        t.loaded = (bh, bp, bt); t.loaded_lanes = mask
        out = []
        for j in range(4):
            t.on_write_reg(f"%r{j + 1}", val, 32, mask, isfull, np.zeros((), np.uint32))
            out.append((t.reg_hash[f"%r{j + 1}"], t.reg_real[f"%r{j + 1}"], t.reg_taint[f"%r{j + 1}"]))
        return out
    return go


cases = {"fma": arith(code[0], ["%f2", "%f3", "%f4"], None), "mul": arith(code[1], ["%f2", "%f3"], None),
         "add": arith(code[2], ["%f2", "%f3"], None), "setp": arith(code[3], ["%f2"], 0),
         "ld.shared.v4 whole": load(code[4], whole, wpos, np.ones((n, 16), np.uint8), full),
         "ld.global.v4 input, masked": load(code[5], raw, rpos, rt, part)}
ta, tb = setup(A), setup(B)
for name, go in cases.items():
    a, b = go(ta), go(tb)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert np.array_equal(np.broadcast_to(u, (n,)), np.broadcast_to(v, (n,))), name
best = {}
for r in range(rounds):
    for side, t in (("A", ta), ("B", tb)) if r % 2 == 0 else (("B", tb), ("A", ta)):
        for name, go in cases.items():
            t0 = time.process_time()
            for _ in range(300):
                go(t)
            best[(name, side)] = min(best.get((name, side), 1e9), (time.process_time() - t0) / 300)
import os
print(f"n={n} rounds={rounds} load {os.getloadavg()[0]:.2f}")
for name in cases:
    a, b = best[(name, "A")], best[(name, "B")]
    print(f"  {name:28s} base {a*1e6:7.1f} us  branch {b*1e6:7.1f} us  {b/a:.3f}")
