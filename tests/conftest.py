"""Test-wide settings: under CI, hypothesis draws the same examples on every run, so a red build
is reproducible; locally it explores new examples each time (VOLTA_HYPOTHESIS=random forces that)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
if os.environ.get("CI") and os.environ.get("VOLTA_HYPOTHESIS") != "random":
    settings.load_profile("ci")
else:
    settings.load_profile("explore")


HEAVY_TIER = Path(__file__).with_name("heavy_tier.txt")


def _heavy_ids() -> set[str]:
    ids = set()
    for line in HEAVY_TIER.read_text().splitlines():
        node = line.split("#", 1)[0].strip()
        if node:
            ids.add(node)
    return ids


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests listed in heavy_tier.txt `heavy`; a listed id that matches no collected test
    is an error when the whole suite was collected (a renamed test must not leave the list stale)."""
    heavy = _heavy_ids()
    for item in items:
        if item.nodeid in heavy:
            item.add_marker(pytest.mark.heavy)
    whole_suite = [str(a) for a in config.args] in (["tests"], [str(Path(__file__).parent)])
    if whole_suite and (stale := sorted(heavy - {item.nodeid for item in items})):
        raise pytest.UsageError(f"{HEAVY_TIER}: no such test: {', '.join(stale)}")
