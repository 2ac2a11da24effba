"""Where "faster" comes from. The loop asks a :class:`TimingSource` for each accepted candidate's
measurement; the only source outside tests is :class:`HarnessTiming`, the harness's own GPU timing
against autotuned Triton (median, bootstrap interval). Without a GPU it gives nothing, and the loop
says so instead of guessing. Tests inject a fake keyed by the candidate's hash (tests/agent)."""

from __future__ import annotations

from typing import Protocol

from .records import Judged, Measurement


class TimingSource(Protocol):
    name: str

    def measure(self, sha256: str, judged: Judged) -> Measurement | None: ...


class HarnessTiming:
    name = "harness"

    def measure(self, sha256: str, judged: Judged) -> Measurement | None:
        return judged.speedup
