"""A node pool's kind as CLM tells it from the profile, one definition (clmgit/model.py)."""

from __future__ import annotations

import pytest

from clmgit.model import is_karpenter, is_master


@pytest.mark.parametrize(("profile", "master", "master_prefix", "karpenter"), [
    ("master-default", True, True, False),
    ("legacy-master", True, False, False),  # IsMaster contains; the template functions' prefix
    ("worker-default", False, False, False),
    ("worker-karpenter", False, False, True),
    ("worker-karpenter-x", False, False, False),
])
def test_pool_kinds(profile: str, master: bool, master_prefix: bool, karpenter: bool) -> None:
    assert is_master(profile) is master
    assert is_master(profile, prefix=True) is master_prefix
    assert is_karpenter(profile) is karpenter
