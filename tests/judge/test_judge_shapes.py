"""Sizes nobody saw keep the PTX's specialisation, are reproducible from the seed, and are new."""

from __future__ import annotations

import pytest

from harness import suite
from harness.judge.shapes import UNSEEN, input_elements, unseen_shapes, with_instance


@pytest.mark.parametrize("name", ["relu", "softmax", "rowsum", "conv2d"])
def test_unseen_shapes_keep_the_specialisation(name: str) -> None:
    c = suite.get(name)
    shapes = unseen_shapes(c, "sm_90a", 2, seed=11, max_elements=1 << 18)
    assert shapes and shapes == unseen_shapes(c, "sm_90a", 2, seed=11, max_elements=1 << 18)
    want = c.triton_signature("verify")
    for dims in shapes:
        assert dims not in (c.instances["verify"], c.instances["bench"])
        u = with_instance(c, UNSEEN, dims)
        assert u.triton_signature(UNSEEN) == want and input_elements(u, UNSEEN) <= 1 << 18
