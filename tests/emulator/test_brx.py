"""brx.idx (PTX 9.7.12.2) and setmaxnreg on the emulator: an indexed branch through a
.branchtargets list, divergent lanes reconverging after it (Triton's warp-specialised kernels
dispatch their partitions this way), and the undefined cases."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from ptx_parser import parse
from symexec import Launch, UndefinedBehavior, load_program, run_kernel

KERNEL = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pout, .param .u32 pdiv)
{{
.reg .b64 %rd<8>; .reg .b32 %r<16>; .reg .pred %p<4>;
TARGETS: .branchtargets L0, L1, L2;
ld.param.u64 %rd1, [pout];
ld.param.u32 %r9, [pdiv];
mov.u32 %r1, %tid.x;
div.u32 %r2, %r1, %r9;           // the index: tid / div (32: one per warp, 1: one per lane)
rem.u32 %r2, %r2, {n};
setmaxnreg.inc.sync.aligned.u32 232;
{guard}brx.idx{uni} %r2, TARGETS;
mov.u32 %r3, 99;
bra.uni JOIN;
L0: mov.u32 %r3, 10; bra.uni JOIN;
L1: mov.u32 %r3, 11; bra.uni JOIN;
L2: mov.u32 %r3, 12;
JOIN:
add.u32 %r3, %r3, 1000;          // after reconvergence, on every lane
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r3;
ret;
}}
"""


def run(div: int, n: int = 3, uni: bool = False, guard: str = "") -> np.ndarray:
    text = KERNEL.format(n=n, uni=".uni" if uni else "", guard=guard)
    glob, _, _ = run_kernel(load_program(parse(text)),
                            Launch((1,), (96,), {"out": np.zeros(96, np.uint32)}, ["out", div]))
    return glob.by_name("out").data.view(np.uint32)


def test_one_target_per_warp() -> None:
    assert run(32, uni=True).tolist() == [1010] * 32 + [1011] * 32 + [1012] * 32


def test_divergent_lanes_reconverge() -> None:
    assert run(1).tolist() == [1010 + t % 3 for t in range(96)]


def test_guard_false_falls_through() -> None:
    text_guard = "setp.lt.u32 %p1, %r1, 48;\n@%p1 "
    out = run(1, guard=text_guard)
    assert out[:48].tolist() == [1010 + t % 3 for t in range(48)] and out[48:].tolist() == [1099] * 48


def test_uni_with_divergent_targets_is_undefined() -> None:
    with pytest.raises(UndefinedBehavior, match="brx.idx.uni"):
        run(1, uni=True)


def test_index_beyond_the_list_is_undefined() -> None:
    with pytest.raises(UndefinedBehavior, match="beyond the 3 targets"):
        run(1, n=4)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not on PATH")
def test_ptxas_accepts_it(tmp_path) -> None:
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(n=3, uni="", guard=""))
    proc = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


DATA_INDEX = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
.reg .b64 %rd<8>; .reg .b32 %r<16>;
TARGETS: .branchtargets L0, L1;
ld.param.u64 %rd1, [pin];
ld.param.u64 %rd4, [pout];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
ld.global.u32 %r2, [%rd3];
and.b32 %r2, %r2, 1;             // the index comes from the input
brx.idx %r2, TARGETS;
L0: mov.u32 %r3, 10; bra.uni JOIN;
L1: mov.u32 %r3, 11;
JOIN:
add.u64 %rd5, %rd4, %rd2;
st.global.u32 [%rd5], %r3;
ret;
}
"""


def test_checker_notes_a_data_dependent_jump_table_index() -> None:
    """The path a data-dependent brx.idx takes depends on the input: the verdict holds for the
    launch's input only, says so, and names the branch; never a plain race_free."""
    from symexec.check import check_kernel

    prog = load_program(parse(DATA_INDEX))
    r = check_kernel(prog, Launch((1,), (32,), {"in": np.arange(32, dtype=np.uint32), "out": np.zeros(32, np.uint32)},
                                  ["in", "out"]))
    assert r.verdict == "race_free: for the launch's input only", r.verdict
    assert any("target index of brx.idx" in n for n in r.notes), r.notes
    assert not any("every input" in a for a in r.assumptions)
