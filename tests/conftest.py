"""Test-wide settings: under CI, hypothesis draws the same examples on every run, so a red build
is reproducible; locally it explores new examples each time (VOLTA_HYPOTHESIS=random forces that)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
if os.environ.get("CI") and os.environ.get("VOLTA_HYPOTHESIS") != "random":
    settings.load_profile("ci")
else:
    settings.load_profile("explore")
