"""ptxas for the candidate: the resource report, and the line-annotated twin whose machine code is
the plain cubin's and whose line table maps SASS offsets to the candidate's own PTX lines."""

from __future__ import annotations

from pathlib import Path

import pytest

import ptx_parser
from harness import suite
from harness.compile import compile_contract
from harness.judge import ptxas as P

HONEST = Path(__file__).parents[1] / "integrity" / "honest_relu.ptx"
# nvcc output with a local-memory stack depot (``.local ... __local_depot0``) and its own .loc lines
DEPOT = Path(__file__).parents[2] / "examples" / "candidates" / "bitdelta_batched" / "bitdelta_batched_mma.sm_90a.ptx"


def _instruction_lines(text: str, module) -> set[int]:
    return {i.span.line for f in module.functions for i in f.instructions()}


@pytest.mark.parametrize("source", ["honest", "triton", "nvcc_depot"])
def test_twin_has_the_same_code_and_maps_to_instruction_lines(source: str) -> None:
    if source == "honest":
        text, entry = HONEST.read_text(), "relu_kernel"
    elif source == "nvcc_depot":
        text, entry = DEPOT.read_text(), "bitdelta_batched_kernel"
        assert "\t.local .align" in text  # the declaration the twin once dropped as if it were a .loc
    else:
        ref = compile_contract(suite.get("softmax"), "sm_90a", "verify")
        text, entry = ref.ptx, ref.entry
    module = ptx_parser.parse(text, "c.ptx")
    plain = P.assemble(text, "sm_90a", entry)
    twin = P.assemble(P.annotate(text, module), "sm_90a", entry, lineinfo=True)
    assert plain.ok and twin.ok and plain.resources.registers > 0
    assert P.same_code(plain.cubin, twin.cubin)
    lines = P.line_map(twin.cubin)
    assert lines and set(lines.values()) <= _instruction_lines(text, module)


def test_resources_and_failures() -> None:
    log = ("ptxas info    : Compiling entry function 'k' for 'sm_90a'\nptxas info    : Function properties for k\n"
           "    64 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]\n")
    r = P.parse_resources(log, "k")
    assert (r.registers, r.barriers, r.shared_bytes, r.constant_bytes) == (40, 1, 4096, 368)
    assert (r.stack_frame, r.spill_stores, r.spill_loads) == (64, 8, 12)
    bad = P.assemble(HONEST.read_text().replace("add.s32 \t%r5, %r4, %r3;", "add.s32 \t%r5, %r4, %q3;"),
                     "sm_90a", "relu_kernel")
    assert not bad.ok and "candidate.ptx" in bad.log and bad.cubin == b""
