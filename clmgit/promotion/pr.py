"""Promotion pull requests (docs/how-to/promote-and-rollback.md): a plan proposed instead of landed.

The plan is made against the remote as it is after a fetch, its commit is built on top of the
remote control branch on a branch of its own, pushed, and a pull request is opened through the
GitHub API — or updated, if one is already open for that branch. No local branch moves: merging
moves the control branch, and `sync-branches` fast-forwards the channel branch afterwards.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from clmgit import mdtext
from clmgit.adapters.git import GitRepo, RefUpdate
from clmgit.adapters.github import BODY_LIMIT, GitHub, PullRequest, resolve_repository
from clmgit.errors import ClmgitError
from clmgit.model import short_version
from clmgit.promotion.preview import (
    PREVIEW_LIMIT,
    GroupPreview,
    format_report,
    preview,
)
from clmgit.promotion.promote import GroupChange, Plan
from clmgit.workspace import Workspace

#: What of the group names a branch name holds; longer lists are cut and told apart by a digest.
GROUPS_IN_BRANCH = 60
_REF_UNSAFE = re.compile(r"[^A-Za-z0-9_+-]+")  # dots too: `..` and `.lock` are not allowed
#: Room for the separators and a closing fence around a cut preview.
FENCE_RESERVE = 64
CUT_NOTE = (
    "\n\n_The preview was cut here to fit GitHub's limit of {limit:,} characters; "
    "`clmgit diff` shows all of it._"
)


@dataclass(frozen=True)
class PullRequestResult:
    repository: str
    branch: str
    base: str
    base_sha: str
    title: str
    commit: str | None  # None in a dry run
    pushed: bool  # False when the branch already held this very change
    pull: PullRequest | None  # None in a dry run
    created: bool
    preview_error: str = ""  # why the body has no preview, if it has none


def branch_name(plan: Plan) -> str:
    """`clmgit/promote-<channel>-<groups>-<sha7>`. The groups are part of it, so that a canary
    pull request and one for the other groups at the same SHA are two branches, not one."""
    name = plan.action  # promote, hotfix or rollback
    groups = _REF_UNSAFE.sub("-", "+".join(sorted(c.group for c in plan.changes))).strip("-")
    if len(groups) > GROUPS_IN_BRANCH:
        digest = hashlib.sha256(groups.encode()).hexdigest()[:8]
        groups = f"{groups[:GROUPS_IN_BRANCH - len(digest) - 1]}-{digest}"
    version = _REF_UNSAFE.sub("-", short_version(plan.sha)).strip("-")
    return f"clmgit/{name}-{plan.target}-{groups}-{version}"


def open_pull_request(
    ws: Workspace, plan: Plan, *, dry_run: bool = False, env: Mapping[str, str] | None = None
) -> PullRequestResult:
    """Push the plan's commit on its branch and open (or update) its pull request.

    Checks the token and finds an open pull request before pushing, so that a bad token or
    repository leaves nothing behind. A dry run reads only: no push, no API call.
    """
    env = os.environ if env is None else env
    repository = resolve_repository(env, ws.origin_url())
    branch, title = branch_name(plan), plan.message.splitlines()[0]
    result = PullRequestResult(
        repository, branch, ws.control_branch, ws.control_sha, title, None, False, None, False
    )
    if dry_run:
        return result
    github = GitHub.from_env(env)
    body, preview_error = pull_request_body(ws, plan)
    existing = github.open_pull(repository, branch=branch, base=ws.control_branch)
    commit, pushed = _push_branch(ws, plan, branch)
    if existing is not None:
        pull = github.update_pull(repository, existing.number, title=title, body=body)
    else:
        pull = github.create_pull(
            repository, head=branch, base=ws.control_branch, title=title, body=body
        )
    return replace(
        result,
        commit=commit,
        pushed=pushed,
        pull=pull,
        created=existing is None,
        preview_error=preview_error,
    )


def _push_branch(ws: Workspace, plan: Plan, branch: str) -> tuple[str, bool]:
    """The plan's commit on `branch` at the remote; reused if the branch already holds it."""
    repo = ws.repo
    there = repo.rev(f"refs/remotes/{ws.remote}/{branch}")
    if there and _same_change(repo, there, parent=ws.control_sha, message=plan.message):
        return there, False
    files = {path: text.encode() for path, text in plan.files.items()}
    commit = repo.make_commit(ws.control_sha, files, plan.message)
    # With `there` as the old value, a branch that moved is force-pushed with a lease on it.
    repo.push(ws.remote, [RefUpdate(f"refs/heads/{branch}", commit, there, replaceable=True)])
    return commit, True


def _same_change(repo: GitRepo, sha: str, *, parent: str, message: str) -> bool:
    """Same parent and same message: the same promotion (only `promoted_at` would differ)."""
    parents, _, body = repo.run("show", "-s", "--format=%P%n%B", sha).partition("\n")
    return parents.strip() == parent and body.strip() == message.strip()


# --- the body -------------------------------------------------------------------------------


def pull_request_body(ws: Workspace, plan: Plan, *, limit: int = BODY_LIMIT) -> tuple[str, str]:
    """The intro, the `clmgit diff` preview and what happens on merge, cut to fit `limit`;
    and why the preview is missing, if it is (the pull request is still worth opening)."""
    groups = ", ".join(mdtext.code(c.group) for c in plan.changes)
    target, sha = mdtext.code(plan.target), mdtext.code(short_version(plan.sha))
    if plan.action == "promote":
        intro = f"Promotes {groups} of channel {target} from {mdtext.code(plan.source or '')}"
        intro += f" to {sha}."
    elif plan.action == "hotfix":
        intro = f"Ships the hotfix {sha} of channel {target}'s own branch to {groups}."
    else:
        intro = f"Rolls back {groups} of channel {target} to {sha}."
    if plan.overrides:
        intro += "\n\n**Overrides:**\n" + "\n".join(f"- {mdtext.text(o)}"
                                                    for o in plan.overrides)
    after = "Merging this moves the pins; `clmgit reconcile` then applies them."
    if plan.move:
        after += (
            f" Branch `{plan.move.branch}` is fast-forwarded to `{plan.move.new[:7]}` by "
            "`clmgit sync-branches --push` after the merge."
        )
    try:
        report, error = _report(ws, plan), ""
    except ClmgitError as e:
        error = str(e)
        report = f"_No preview: {error}_"
    return cut_body(intro, report, after, limit=limit), error


def _report(ws: Workspace, plan: Plan) -> str:
    """`clmgit diff` of a promotion; for a rollback, the commits it takes back."""
    groups = [c.group for c in plan.changes]
    if plan.action == "hotfix":  # no source channel to diff against: what the fix brings
        return format_report([_commits(ws, c, forward=True) for c in plan.changes],
                             markdown=True)
    if plan.source is not None:
        pins = ws.versions.pins(plan.sha) or {}
        items = preview(ws, source=plan.source, target=plan.target, groups=groups,
                        sha=[f"{n}={s}" for n, s in pins.items()])
        return format_report(items, markdown=True)
    return format_report([_commits(ws, c, forward=False) for c in plan.changes],
                         markdown=True)


def _commits(ws: Workspace, change: GroupChange, *, forward: bool) -> GroupPreview:
    """The commits a hotfix brings to the group (`forward`), or a rollback takes back."""
    v = ws.versions
    was, now = v.pins(change.old), v.pins(change.new)
    head, base = (now, was) if forward else (was, now)
    log = v.log(head, [base] if base else [], limit=PREVIEW_LIMIT) if head else None
    return GroupPreview(change.group, change.old, change.new, log.commits if log else (),
                        log.total if log else 0, forward=forward)


def cut_body(intro: str, report: str, after: str, *, limit: int = BODY_LIMIT) -> str:
    """Join the parts; if too long for GitHub, cut the report at a line and say so."""
    body = f"{intro}\n\n{report}\n\n{after}"
    if len(body) <= limit:
        return body
    note = CUT_NOTE.format(limit=limit)
    budget = limit - len(intro) - len(after) - len(note) - FENCE_RESERVE
    kept = report[: max(budget, 0)]
    kept = kept[: kept.rfind("\n")] if "\n" in kept else kept
    fence = _open_fence(kept)
    if fence:
        kept += "\n" + fence  # close the code block the cut left open
    return f"{intro}\n\n{kept}{note}\n\n{after}"


def _open_fence(text: str) -> str | None:
    """The fence of a markdown code block still open at the end of `text`, if any."""
    open_fence = None
    for line in text.splitlines():
        run = re.match(r"^`{3,}", line)
        if run is None:
            continue
        if open_fence is None:
            open_fence = run.group(0)
        elif line.strip() == open_fence:
            open_fence = None
    return open_fence
