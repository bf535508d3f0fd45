"""The kill-point battery's choice of points (tests/helpers/barrier.py): a kill goes before the
first call, after every call that may write, and after clmgit's own writes between two reads;
never twice at one state."""

from __future__ import annotations

from tests.helpers.barrier import GitCall, kill_points, reads_only


def calls(*lines: tuple[str, str]) -> list[GitCall]:
    return [GitCall(state, tuple(argv.split())) for state, argv in lines]


def test_reads_are_a_short_list_and_anything_else_writes() -> None:
    reads = ["rev-parse --verify HEAD", "--git-dir /r/.git cat-file --batch", "symbolic-ref HEAD",
             "config --get user.name", "remote", "worktree list --porcelain",
             "hash-object --stdin", "merge-base --is-ancestor a b"]
    writes = ["symbolic-ref HEAD refs/heads/main", "config user.name x", "remote add o /o",
              "worktree add /w", "hash-object -w --stdin", "status --porcelain", "read-tree a",
              "update-ref --stdin", "push origin main", "fetch origin", "gc", "frobnicate"]
    assert [a for a in reads if not reads_only(tuple(a.split()))] == []
    assert [a for a in writes if reads_only(tuple(a.split()))] == []


def test_a_kill_goes_after_each_write_and_each_change_clmgit_made_itself() -> None:
    run = calls(("s0", "version"), ("s0", "rev-parse HEAD"), ("s0", "hash-object -w --stdin"),
                ("s1", "rev-parse HEAD"), ("s1", "symbolic-ref HEAD"),
                ("s2", "rev-parse HEAD"),  # clmgit wrote its lock between two reads
                ("s2", "update-ref --stdin"))
    assert kill_points(run) == [1, 4, 6]
