"""What a promotion would bring, per target group: the commits to `cluster/` it adds, and the
unified diff of the rendered stacks and manifests of one cluster of the group (or the cluster
asked for) between the group's pin and the new SHA, secret-looking config values masked.

`format_report` is the whole preview as text: what `clmgit diff` prints, and (as markdown) the
body of a promotion pull request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clmgit import mdtext
from clmgit.adapters.git import Commit
from clmgit.channels import DEFAULT_GROUP, Channel, Group
from clmgit.config.composed import workspace_source
from clmgit.config.diff import ClusterDiff, rendered_diff
from clmgit.config.secrets import masker_for
from clmgit.config.source import ConfigSource
from clmgit.errors import ClmgitError, ConfigError
from clmgit.layout import Layout
from clmgit.model import Cluster, short_version
from clmgit.promotion.promote import given_pins, source_pins
from clmgit.workspace import Workspace

PREVIEW_LIMIT = 200
#: Characters of rendered diff shown per group; the rest is named, not shown.
RENDERED_LIMIT = 20_000


@dataclass(frozen=True)
class GroupPreview:
    group: str
    old: str | None
    new: str
    commits: tuple[Commit, ...]
    total: int  # commits in old..new that touch cluster/ (may exceed len(commits))
    forward: bool  # False: the new SHA does not contain the old one
    rendered: ClusterDiff | None = None  # None: nothing rendered, `note` says why
    note: str = ""


def preview(
    ws: Workspace,
    *,
    source: str,
    target: str,
    groups: Sequence[str] = (),
    cluster: str | None = None,
    sha: str | Sequence[str] | None = None,
    rendered_limit: int = RENDERED_LIMIT,
) -> list[GroupPreview]:
    """Per selected group of `target`: the commits (of every source; with several, each
    subject names its source) and the rendered diff that promoting `source` (or `sha`: `--sha`
    values) would bring. `cluster` selects its group and is the one rendered."""
    v = ws.versions
    src, dst = ws.channel(source), ws.channel(target)
    new = source_pins(ws, src, given_pins(ws, sha, "--sha"))
    version = v.version(new)
    selected, chosen = _selection(ws, dst, groups, cluster)
    config = workspace_source(ws.sources, ws.source_repos.repo, follow_symlinks=ws.layout.clm)
    out = []
    for g in selected:
        # A pin that predates a source compares at the head of that source's branch: like
        # with like, not every file of the new source as new.
        old = (v.complete(dst, g.pins) if g.pins else None) if dst.groups else v.head(dst)
        log = v.log(new, [old] if old else [], limit=PREVIEW_LIMIT, from_start=True)
        forward = old is None or v.contains(old, new)
        was = v.version(old) if old else None
        record = chosen or _representative(ws, dst, g)
        diff, note = _rendered(config, record, dst, g, old=was, new=version, layout=ws.layout)
        out.append(GroupPreview(g.name, was, version, log.commits, log.total, forward,
                                diff and diff.capped(rendered_limit), note))
    return out


def _rendered(config: ConfigSource, record: Cluster | None, dst: Channel, group: Group, *,
              old: str | None, new: str, layout: Layout) -> tuple[ClusterDiff | None, str]:
    """The group's rendered diff, or why there is none. A template that fails at the new SHA is
    reported in the preview rather than aborting it: the commits are still worth reading, and a
    reviewer of the promotion must see the failure."""
    if record is None:
        return None, f"no cluster of {dst.name!r} is in group {group.name!r}: nothing rendered"
    try:
        return rendered_diff(config, record, old_sha=old, new_sha=new, label=group.name,
                             layout=layout), ""
    except ClmgitError as e:
        failure = f"rendering {new[:7]} for cluster {record.id} failed: {e}"
        return None, masker_for(record)(failure)


def _selection(ws: Workspace, dst: Channel, groups: Sequence[str],
               cluster: str | None) -> tuple[Sequence[Group], Cluster | None]:
    """The groups to preview and, with `cluster`, the record that stands for its group."""
    if groups and not dst.groups:
        dst.group(groups[0])  # raises: the channel has no groups
    selected: Sequence[Group] = dst.select(groups) if dst.groups else (Group(DEFAULT_GROUP),)
    if not cluster:
        return selected, None
    record = ws.cluster(cluster)
    if record.channel != dst.name:
        raise ConfigError(f"cluster {record.id} is in channel {record.channel!r}, "
                          f"not {dst.name!r}")
    group = dst.group_for(record) if dst.groups else Group(DEFAULT_GROUP)
    if group is None:
        raise ConfigError(f"cluster {record.id} is in no group of channel {dst.name!r}")
    if group.name not in {g.name for g in selected}:
        raise ConfigError(f"cluster {record.id} is in group {group.name!r}, not in the groups "
                          "asked for")
    return (group,), record


def _representative(ws: Workspace, dst: Channel, group: Group) -> Cluster | None:
    """The first live cluster of the channel in the group, in registry order."""
    for c in ws.clusters:
        if c.channel != dst.name or c.lifecycle_status.startswith("decommission"):
            continue
        if not dst.groups or dst.group_for(c) == group:
            return c
    return None


def format_report(items: Sequence[GroupPreview], *, markdown: bool = False) -> str:
    """The preview as text (markdown: headings, commit lists, fenced `diff` blocks)."""
    if markdown:
        return "\n\n".join(_markdown(p) for p in items)
    return "\n".join(_plain(p) for p in items)  # each ends with a newline: a blank line between


def _short(sha: str | None) -> str:
    return short_version(sha)


def _plain(p: GroupPreview) -> str:
    if p.old == p.new:
        return f"{p.group}: already at {_short(p.new)}\n"
    warn = "" if p.forward else "  (not forward: needs --force or is a rollback)"
    lines = [f"{p.group}: {_short(p.old)}..{_short(p.new)}, {p.total} commit(s) to cluster/{warn}"]
    lines += [f"  {c.sha[:7]} {c.subject} ({c.author})" for c in p.commits]
    if p.total > len(p.commits):
        lines.append(f"  ... and {p.total - len(p.commits)} more")
    if p.note:
        lines.append(f"# {p.note}")
    text = "\n".join(lines) + "\n"
    return text + (p.rendered.text() if p.rendered else "")


def _markdown(p: GroupPreview) -> str:
    old = short_version(p.old) if p.old else "none"
    head = f"### {mdtext.code(p.group)}: {mdtext.code(old)} → {mdtext.code(_short(p.new))}"
    if p.old == p.new:
        return f"{head}: already there"
    warn = "" if p.forward else " (not forward: a rollback or forced)"
    lines = [f"{head}, brings {p.total} commit(s) to `cluster/`{warn}"]
    # Subjects and authors are anyone's words: shown, never rendered (no links, mentions).
    lines += [f"- {mdtext.code(c.sha[:7])} {mdtext.text(c.subject)} ({mdtext.text(c.author)})"
              for c in p.commits]
    if p.total > len(p.commits):
        lines.append(f"- … and {p.total - len(p.commits)} more")
    if p.note:
        lines.append(f"\n> {mdtext.text(p.note)}")
    r = p.rendered
    if r is not None:
        lines.append(f"\nRendered for cluster {mdtext.code(r.cluster_id)}:")
        if r.files:
            body = "".join(f.text for f in r.files).rstrip("\n")
            lines.append("\n" + mdtext.code_block(body, "diff"))
        elif not r.changed:
            lines.append("no change to the rendered stacks and manifests.")
        if r.note:
            lines.append(f"\n> {mdtext.text(r.note)}")
    return "\n".join(lines)

