"""A CLM repository brought over: its `cluster/` read at a ref (or from a directory), converted,
optionally proven identical (`check`), and written as one commit on a new branch or into a
directory. All or nothing: a refusal, a difference or an existing branch writes nothing.

The converted commit's parent is the commit converted from, so `git diff <ref> <ref>-jinja`
shows exactly what the conversion changed; only files under `cluster/` change.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clmgit.adapters.git import GitRepo, RefUpdate
from clmgit.config.source import GitConfigSource
from clmgit.convert.tree import Conversion, convert_tree
from clmgit.errors import ConfigError, GitError, RefusedError
from clmgit.model import Cluster

if TYPE_CHECKING:
    from clmgit.convert.check import CheckResult

CLUSTER_DIR = "cluster"
MAIN_STACK = "cluster/cluster.yaml"  # CLM's main stack: what makes `cluster/` CLM's
ALL_CHANNELS = ("dev", "alpha", "beta", "stable")
BRANCH_SUFFIX = "-jinja"


@dataclass(frozen=True)
class Source:
    """`cluster/` of a CLM repository: at a commit (`ref`, `sha`) or from a directory."""

    label: str  # the ref or the directory, for messages
    files: dict[str, bytes]
    sha: str | None = None


@dataclass
class Migration:
    source: Source
    conversion: Conversion
    onto: str | None = None  # the branch written (or that would be)
    out: str | None = None  # the directory written (or that would be)
    commit: str | None = None  # the converted commit, once written
    written: bool = False
    check: CheckResult | None = None
    check_sample: str | None = None  # what was rendered when there is no registry

    def summary(self) -> dict[str, Any]:
        usage = self.conversion.usage
        data: dict[str, Any] = {
            "from": self.source.label, "from_sha": self.source.sha,
            "onto": self.onto, "out": self.out, "commit": self.commit, "written": self.written,
            "files_converted": len(self.conversion.files),
            "constructs": dict(usage.constructs.most_common()),
            "functions": dict(usage.functions.most_common()),
        }
        if self.check is not None:
            data["check"] = {"sample": self.check_sample, **self.check.summary()}
        return data


# -- reading -------------------------------------------------------------------------------------

def read_source(repo_path: str, source: str, *, main: bool = True) -> Source:
    """`source` as a directory holding `cluster/`, else as a ref of the repo at `repo_path`.
    `main`: it must hold CLM's main stack (a later config source need not)."""
    directory = Path(source)
    if directory.is_dir():
        return _read_directory(directory)
    repo = GitRepo(repo_path)
    # A fresh clone has one local branch: the others are read from origin's.
    sha = repo.rev(source) or repo.rev(f"refs/remotes/origin/{source}")
    if sha is None:
        raise GitError(f"{source} is neither a directory nor a branch, tag or commit of "
                       f"{repo.location}")
    try:
        tree = GitConfigSource(repo).files(sha)
    except ConfigError:
        raise ConfigError(f"{source} ({sha[:7]}) has no {CLUSTER_DIR}/ directory, so it is not "
                          "a CLM repository") from None
    files = dict(tree)
    _resolve_links(repo, sha, files)
    read = Source(source, dict(sorted(files.items())), sha)
    return _clm(read) if main else read


def _resolve_links(repo: GitRepo, sha: str, files: dict[str, bytes]) -> None:
    """Symbolic links under `cluster/` (kubernetes-on-aws shares node-pool files that way) as
    the files they point to: CLM reads a checkout, where a link reads as its target; the
    converted tree holds them as plain files, which every reader of a tree at a SHA sees."""
    listing = repo.run("ls-tree", "-r", "-z", sha, "--", CLUSTER_DIR).split("\0")
    links = {}
    for entry in filter(None, listing):
        meta, path = entry.split("\t", 1)
        if meta.startswith("120000 "):
            target = repo.run("cat-file", "blob", meta.split()[2])
            links[path] = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    for path in links:
        target, seen = links[path], {path}
        while target in links and target not in seen:
            seen.add(target)
            target = links[target]
        if target not in files:
            raise ConfigError(f"{path} is a link to {target}, which is not a file under "
                              f"{CLUSTER_DIR}/ at {sha[:7]}")
        files[path] = files[target]


def _read_directory(directory: Path) -> Source:
    root = directory / CLUSTER_DIR
    if not root.is_dir():
        raise ConfigError(f"{directory} has no {CLUSTER_DIR}/ directory, so it is not a CLM "
                          "repository")
    # Hidden folders (`.git`, an editor's) are left out; hidden files are not.
    files = {path.relative_to(directory).as_posix(): path.read_bytes()
             for path in sorted(root.rglob("*")) if path.is_file()
             and not any(part.startswith(".") for part in path.relative_to(root).parent.parts)}
    return _clm(Source(str(directory), files))


def _clm(source: Source) -> Source:
    if MAIN_STACK not in source.files:
        raise ConfigError(f"{source.label} has no {MAIN_STACK} (CLM's main stack), so it is not "
                          "a CLM repository")
    return source


# -- converting and checking ------------------------------------------------------------------

def convert(source: Source) -> Conversion:
    """The conversion, or a `RefusedError` listing every construct refused (file:line)."""
    conversion = convert_tree(source.files)
    if conversion.refused:
        listed = "; ".join(conversion.refused)
        raise RefusedError(f"{source.label}: {len(conversion.refused)} construct(s) cannot be "
                           f"converted, nothing was written: {listed}")
    return conversion


def check(conversion: Conversion, clusters: Sequence[Cluster], *, ec2: Any) -> CheckResult:
    """Every cluster rendered from the original and from the conversion, then variants of the
    first that reach the templates the clusters leave at comments (see `check`)."""
    # the renderer, CLM's functions, boto3: only here
    from clmgit.convert.check import Checker, check_covering
    from clmgit.convert.clmdata import tree_profiles, variant_pools

    checker = Checker(conversion.parsed, conversion.files, ec2=ec2)
    return check_covering(checker, clusters, variant_pools(tree_profiles(conversion.files)))


# -- writing ------------------------------------------------------------------------------------

def branch_for(ref: str) -> str:
    """The default branch a ref converts onto: `dev`, `refs/heads/dev`, `origin/dev` →
    `dev-jinja`."""
    name = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/").removeprefix("origin/")
    return name + BRANCH_SUFFIX


def refuse_existing(repo: GitRepo, branches: Sequence[str]) -> None:
    """Refuse before anything is written if any of `branches` exists already."""
    taken = [b for b in branches if repo.branch_sha(b) is not None]
    if taken:
        raise RefusedError(f"branch {', '.join(taken)} exists already; clmgit convert only "
                           "creates new branches (delete it or pass another --onto)")


def commit_conversion(repo: GitRepo, migration: Migration, *, parent: str) -> str:
    """The converted commit on top of `parent`, `cluster/` replaced wholly (object database
    only; the branch is created by `create_branches`)."""
    conversion = migration.conversion
    with tempfile.TemporaryDirectory(prefix="clmgit-convert-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        repo.run("read-tree", parent, env=env)
        old = repo.run("ls-files", "-z", "--", CLUSTER_DIR, env=env).split("\0")
        # A directory's tree replaces the parent's cluster/ wholly; a ref's is the parent's.
        gone = [p for p in old if p and p not in conversion.files]
        if gone:
            repo.run("update-index", "--force-remove", "-z", "--stdin", env=env,
                     stdin="".join(f"{p}\0" for p in gone).encode())
        blobs = repo.run("hash-object", "-w", "--stdin-paths", "--no-filters", env=env,
                         stdin=_staged(tmp, conversion)).split()
        info = "".join(f"100644 {blob}\t{path}\0"
                       for blob, path in zip(blobs, conversion.files, strict=True))
        repo.run("update-index", "--add", "-z", "--index-info", env=env, stdin=info.encode())
        tree = repo.run("write-tree", env=env).strip()
    message = (f"Convert cluster/ of {migration.source.label} from Go templates to Jinja2\n\n"
               f"Written by `clmgit convert`.\n\n{conversion.report()}")
    return repo.run("commit-tree", tree, "-p", parent, "-F", "-",
                    stdin=message.encode()).strip()


def _staged(tmp: str, conversion: Conversion) -> bytes:
    """The converted texts as files for `hash-object --stdin-paths` (one process for all)."""
    paths = []
    for i, text in enumerate(conversion.files.values()):
        path = os.path.join(tmp, f"f{i}")
        with open(path, "wb") as f:
            f.write(text.encode())
        paths.append(path)
    return "".join(p + "\n" for p in paths).encode()


def create_branches(repo: GitRepo, commits: dict[str, str]) -> None:
    """Create every branch in one atomic ref update; git refuses if any exists by now."""
    repo.update_refs([RefUpdate(f"refs/heads/{b}", sha, None) for b, sha in commits.items()])


def write_directory(out: Path, conversion: Conversion) -> None:
    """The converted `cluster/` under `out` (created; refused if it holds anything already),
    written beside it first and moved in whole."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RefusedError(f"{out} exists and is not an empty directory; pass a new --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".clmgit-convert-", dir=out.parent))
    try:
        for path, text in conversion.files.items():
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode())
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

