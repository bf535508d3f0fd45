"""Branch names of promotion pull requests."""

from __future__ import annotations

import subprocess

from clmgit.promotion.pr import GROUPS_IN_BRANCH, branch_name
from clmgit.promotion.promote import GroupChange, Plan

SHA = "0123456789abcdef0123456789abcdef01234567"


def plan(*groups: str, action: str = "promote") -> Plan:
    return Plan(action, "beta", "alpha", SHA, tuple(GroupChange(g, None, SHA) for g in groups))


def valid_ref(name: str) -> bool:
    return subprocess.run(["git", "check-ref-format", "--branch", name],
                          capture_output=True).returncode == 0


def test_the_groups_moved_tell_pull_requests_at_one_sha_apart() -> None:
    assert branch_name(plan("canary")) == "clmgit/promote-beta-canary-0123456"
    assert branch_name(plan("default", "canary")) == "clmgit/promote-beta-canary+default-0123456"
    assert branch_name(plan("canary", action="rollback")) == "clmgit/rollback-beta-canary-0123456"


def test_group_names_that_a_ref_cannot_hold_are_replaced() -> None:
    name = branch_name(plan("eu central..1", "x.lock", "a~b^c:d"))
    assert valid_ref(name)
    assert name == "clmgit/promote-beta-a-b-c-d+eu-central-1+x-lock-0123456"


def test_a_long_list_of_groups_is_cut_and_told_apart_by_a_digest() -> None:
    many = [f"group-{i:02d}" for i in range(20)]
    first, second = branch_name(plan(*many)), branch_name(plan(*many[:-1]))
    assert first != second
    for name in (first, second):
        assert valid_ref(name)
        groups = name.removeprefix("clmgit/promote-beta-").removesuffix("-0123456")
        assert len(groups) == GROUPS_IN_BRANCH and groups.startswith("group-00+group-01")
