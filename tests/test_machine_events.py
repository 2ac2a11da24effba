"""The machine's structure: typed events to observers, units registered through one API, layers
that import downward only (symexec/events.py, symexec/units.py, ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import ptx_parser
import symexec.memory
import tcgen05  # noqa: F401  (registers the tensor-core unit)
from symexec import Launch, Machine, load_program
from symexec import units
from symexec.events import (Acquire, Exited, Fence, FenceKind, GroupSplit, MemoryAccess, MemSpace, Observer, Proxy,
                            Reconverged, Release, SplitReason, SyncKind)
from symexec.opcodes import OPCODES, Effect, facts

ROOT = Path(__file__).resolve().parent.parent

KERNEL = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x_ptr)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 buf[64];
  ld.param.u64 %rd1, [x_ptr];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  membar.cta;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.lt.u32 %p1, %r1, 16;
  @!%p1 bra $L_end;
  ld.shared.u32 %r5, [%r4+4];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.release.gpu.global.u32 [%rd3], %r5;
$L_end:
  ret;
}
"""


class Recorder(Observer):
    def __init__(self) -> None:
        self.events: list = []
        self.batches = 0

    def on_batch(self, batch) -> None:
        self.batches += 1

    def on_access(self, ev):
        self.events.append(ev)

    on_release = on_acquire = on_fence = on_split = on_reconverge = on_exit = on_access


def _machine(**kw) -> Machine:
    prog = load_program(ptx_parser.parse(KERNEL, "k.ptx"))
    return Machine(prog, Launch((2,), (64,), {"x": np.zeros(128, np.uint32)}, ["x"]), **kw)


def test_observer_hears_typed_events() -> None:
    rec = Recorder()
    _machine(observers=(rec,)).run()
    evs = rec.events
    assert rec.batches == 1
    acc = [e for e in evs if isinstance(e, MemoryAccess)]
    shared_writes = [e for e in acc if e.write and e.buffer.space is MemSpace.SHARED]
    assert shared_writes and all(e.proxy is Proxy.GENERIC and e.flat.shape[1] == 4 for e in shared_writes)
    glob = [e for e in acc if e.write and e.buffer.space is MemSpace.GLOBAL]
    assert glob and all(int(e.scope) and e.order for e in glob)  # st.release.gpu: strong, releasing
    assert {e.point.kind for e in evs if isinstance(e, Release)} == {SyncKind.BARRIER}
    assert any(isinstance(e, Acquire) for e in evs)
    fences = [e for e in evs if isinstance(e, Fence)]
    assert [f.kind for f in fences] == [FenceKind.MEMORY, FenceKind.PROXY]
    assert fences[1].proxy is Proxy.ASYNC and fences[1].space == ".shared::cta"
    splits = [e for e in evs if isinstance(e, GroupSplit)]
    assert splits and all(s.reason is SplitReason.DIVERGENCE for s in splits)
    assert any(isinstance(e, Reconverged) for e in evs)
    assert sum(len(e.lanes) for e in evs if isinstance(e, Exited)) == 128


def test_plain_run_builds_no_events(monkeypatch) -> None:
    def boom(*a, **k):
        raise AssertionError("an event was built without observers")

    monkeypatch.setattr(symexec.memory, "MemoryAccess", boom)
    _machine().run()


def test_split_keeps_control_dependence_state() -> None:
    m = _machine()
    from symexec.machine import Batch, Group

    b = Batch(m.prog, m.launch, m.glob, [(0, 0, 0)], m.params, m.param_offsets, m.var_addr)
    g = Group(np.ones(b.n, bool), 3, (), ctl=(9,), explore=2)
    b.groups.append(g)
    lanes = np.zeros(b.n, bool)
    lanes[:32] = True
    new = b.split(g, lanes, 4)
    assert new.ctl == (9,) and new.explore == 2 and new.pc == 4
    assert not (g.mask & new.mask).any() and (g.mask | new.mask).all()


def test_units_register_through_one_api() -> None:
    reg = units.registered()
    assert {"async_copy", "mbarrier", "wgmma", "tcgen05"} <= set(reg)
    assert units.handler("tcgen05") is reg["tcgen05"].handlers["tcgen05"]
    with pytest.raises(ValueError, match="already handled"):
        units.register_unit(units.Unit("impostor", {"mbarrier": lambda *a: True}))
    assert "impostor" not in units.registered()


def test_every_handled_opcode_has_facts() -> None:
    """The one opcode table covers every instruction the machine or a unit runs."""
    from semantics.ptx import HANDLERS
    from symexec.machine import _CONTROL

    missing = sorted(op for op in set(HANDLERS) | set(_CONTROL) | set(units._HANDLERS) if op not in OPCODES)
    assert not missing, missing
    assert facts("no_such_opcode").effect is Effect.OTHER


_LAYERS = ["ptx_parser", "semantics", "tcgen05", "symexec", "proofs", "harness", "taic_agent", "volta"]
# tcgen05 sits above symexec's machine core as a plug-in unit: it imports symexec, never the reverse.
_ORDER = {"ptx_parser": 0, "semantics": 1, "symexec": 2, "tcgen05": 3, "proofs": 4, "harness": 5, "taic_agent": 6,
          "volta": 7}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("pkg", _LAYERS)
def test_layers_import_downward_only(pkg: str) -> None:
    bad = []
    for path in (ROOT / pkg).rglob("*.py"):
        for mod in _imports(path):
            if mod in _ORDER and _ORDER[mod] > _ORDER[pkg]:
                bad.append(f"{path.relative_to(ROOT)} imports {mod}")
    assert not bad, bad


def test_machine_core_does_not_import_check_mode() -> None:
    """symexec's machine and units know no listener: only symexec/check imports symexec.check."""
    bad = []
    for path in (ROOT / "symexec").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and ((node.level == 1 and (node.module or "").startswith("check"))
                                                     or (node.module or "").startswith("symexec.check")):
                bad.append(str(path.relative_to(ROOT)))
    assert not bad, bad
