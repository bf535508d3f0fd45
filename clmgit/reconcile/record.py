"""The file registry's state in git: after a run, what reconcile wrote into a `clusters.yaml`
that the control branch tracks is committed there by clmgit, in a commit of its own.

So the checkout is clean again (`git checkout dev` works), a teammate's clone sees the applied
versions once the commit is pushed (`reconcile --push`), and history says when each state was
recorded. clmgit commits only its own fields — each record's `status` and `lifecycle_status`; a
file that also carries a person's uncommitted edit is left as it is, with a note, for its owner
to commit. A registry outside the checkout, untracked, or read while another branch is checked
out is not committed. Leases never reach the file (see clmgit/registry/file.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from clmgit import yamlsafe
from clmgit.errors import ClmgitError, PushRejectedError, RefusedError
from clmgit.workspace import Workspace

#: The fields of a record that clmgit writes (everything else is a person's).
OWN_FIELDS = frozenset({"status", "lifecycle_status"})


@dataclass(frozen=True)
class Recorded:
    path: str  # in the repository
    commit: str | None  # None: nothing to commit, or left alone (see `note`)
    pushed: bool = False
    note: str = ""


def record_state(ws: Workspace, *, push: bool = False, attempts: int = 3) -> Recorded | None:
    """Commit the file registry's changed state on the control branch (and push it with
    `push`); None when the registry is not a tracked file of this checkout."""
    from clmgit.registry.file import FileRegistry

    rel = tracked_registry(ws)
    if rel is None:
        return None
    registry = ws.registry
    assert isinstance(registry, FileRegistry)
    for attempt in range(attempts):
        text = registry.path.read_bytes()
        try:
            recorded = _commit(ws, rel, text, push=push)
        except RefusedError:  # another process committed meanwhile: on top of its commit
            if attempt == attempts - 1:
                raise
            ws = Workspace(ws.repo, control_branch=ws.control_branch,
                           registry_spec=ws.registry_spec, remote=ws.remote)
            continue
        if recorded.commit is not None:
            _cache_parse(text, str(registry.path))
        return recorded
    raise AssertionError("unreachable")


def _cache_parse(text: bytes, name: str) -> None:
    """The committed file parsed into clmgit's cache: the jobs after this run (a report, the
    next reconcile) read this file, and CI restores the cache this job saves, so they start
    from its checked records instead of parsing it again (docs/reference/caches.md)."""
    from clmgit.registry.records import parse_file

    try:
        # Not kept: freezing them would first hand the command's own records back to the
        # collector and walk the whole heap once more (0.6 s in a test process).
        parse_file(text, name, keep=False)
    except ClmgitError:
        pass  # whoever reads the file next says what is wrong with it


def tracked_registry(ws: Workspace) -> str | None:
    """The path in the repository of a file registry that this checkout's control branch
    tracks, with the control branch checked out; None otherwise."""
    from clmgit.registry.file import FileRegistry

    registry = ws.registry
    top = ws.repo.workdir
    if ws.url is not None or top is None or not isinstance(registry, FileRegistry):
        return None
    try:
        rel = registry.path.resolve().relative_to(Path(top).resolve()).as_posix()
    except ValueError:
        return None
    if ws.repo.current_branch() != ws.control_branch:
        return None
    return rel if ws.repo.read_file(ws.control_sha, rel) is not None else None


def _commit(ws: Workspace, rel: str, text: bytes, *, push: bool) -> Recorded:
    committed = ws.repo.read_file(ws.control_sha, rel)
    if committed is None or committed == text:
        return Recorded(rel, None)
    changed = _changed_by_clmgit(committed, text)
    if changed is None:
        return Recorded(rel, None, note=(
            f"{rel} has uncommitted changes besides clmgit's status fields; the state reconcile "
            "wrote was left uncommitted with them: commit the file yourself"))
    subject = f"Record the state of {len(changed)} cluster{'' if len(changed) == 1 else 's'}"
    body = "\n".join(f"- {c}" for c in changed[:50])
    more = f"\n- and {len(changed) - 50} more" if len(changed) > 50 else ""
    message = (f"{subject}\n\nWritten by clmgit reconcile into the file registry:\n"
               f"{body}{more}\n\nClmgit-Action: record\n")
    files = {rel: text.decode()}
    try:
        commit = ws.write(files=files, message=message, push=push, ours=(rel,))
    except PushRejectedError:  # the state is kept, here; origin moved on meanwhile
        commit = ws.write(files=files, message=message, ours=(rel,))
        return Recorded(rel, commit, note=(
            f"recorded the state in {commit and commit[:7]} on "
            f"{ws.control_branch}, but origin's {ws.control_branch} moved on meanwhile: "
            "`git pull --rebase` and `git push` it"))
    return Recorded(rel, commit, push)


def _changed_by_clmgit(old: bytes, new: bytes) -> list[str] | None:
    """The ids of the records whose own fields differ; None when anything else differs (a
    person's edit, a record added or removed, another top-level key)."""
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        before, after = (yamlsafe.load(old, "clusters.yaml", loader),
                         yamlsafe.load(new, "clusters.yaml", loader))
    except yaml.YAMLError:
        return None
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return None
    old_records, new_records = before.pop("clusters", None), after.pop("clusters", None)
    if (before != after or not isinstance(old_records, list)
            or not isinstance(new_records, list) or len(old_records) != len(new_records)):
        return None
    changed = []
    for a, b in zip(old_records, new_records, strict=True):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return None
        if _people_part(a) != _people_part(b):
            return None
        if a != b:
            changed.append(str(b.get("alias") or b.get("id")))
    return changed


def _people_part(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in OWN_FIELDS}
