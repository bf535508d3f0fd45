"""The git layer: refs, ancestry, files at a ref, commits into the object database, atomic pushes.

Every git process clmgit starts treats the repository as data, never as code: `git_env` gives it
settings that win over the repository's own configuration (no hooks, no fsmonitor, no pager, no
credential helper but the operator's, a transport policy clmgit sets itself; see
docs/explanation/untrusted-input.md).

Commits are always built in the object database through a temporary index, never in a working
tree. Refs then move in one `update-ref` transaction against the values the plan saw, so a lost
race changes nothing; a branch checked out here has its index and files brought along under
git's index lock with a two-tree `read-tree -m -u`, which refuses to overwrite local changes —
so a checkout is never left dirty or half-moved (see `update_refs`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import git
from git.exc import InvalidGitRepositoryError, NoSuchPathError

from clmgit.adapters.gitenv import failure, git_env
from clmgit.errors import ClmgitError, GitError, PushRejectedError, RefusedError
from clmgit.machine import process_is_gone, process_namespace
from clmgit.redact import redact

if TYPE_CHECKING:
    from clmgit.adapters import gitobjects

SHORT_SHA_RE = re.compile(r"^[0-9a-fA-F]{4,40}$")
ZERO = "0" * 40
#: How long a write waits for another git command to release the checkout's index.
INDEX_LOCK_WAIT = 10.0
_OBJECT_TYPES = frozenset({"commit", "tag", "tree", "blob"})


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    author: str
    date: str  # ISO 8601, author date
    body: str = ""


@dataclass(frozen=True)
class RefUpdate:
    """Move `ref` from `old` (None: must not exist) to `new`. Only a branch of clmgit's own (a
    pull-request branch) may be `replaceable`: rewritten, with a lease on `old`."""

    ref: str
    new: str
    old: str | None
    replaceable: bool = False


log = logging.getLogger(__name__)


# --- the one way clmgit runs git -------------------------------------------------------------


def run_git(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    ok: Collection[int] = (0,),
) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` in `cwd`, hardened (see `git_env`); an exit code outside `ok` becomes a
    GitError (see `failure`)."""
    log.debug("git %s", " ".join(args))
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, input=stdin, capture_output=True,
            stdin=subprocess.DEVNULL if stdin is None else None, env=git_env(args, env),
        )
    except OSError as e:
        raise GitError(f"cannot run git: {e.strerror}") from None
    if proc.returncode not in ok:
        raise GitError(failure(args, proc.returncode, proc.stderr))
    return proc




class GitRepo:
    """A config repository on disk (bare or with a working tree), found from `path` or any
    directory below its top, as git finds it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # GitPython finds the repository as git does, in Python: it reads files and starts no
        # git process, so a repository's config is read as data here too.
        try:
            found = git.Repo(path, search_parent_directories=True)
        except (InvalidGitRepositoryError, NoSuchPathError):
            raise GitError(f"{path} is not a git repository; pass --repo PATH") from None
        self.git_dir = Path(found.git_dir).resolve()
        tree = found.working_tree_dir
        self.workdir: Path | None = None if found.bare or tree is None else Path(tree).resolve()
        found.close()
        self._history_trees: dict[tuple[str, str], frozenset[str]] = {}
        self._ancestry: dict[tuple[str, str], bool] = {}
        if self.workdir is not None and (self.git_dir / "index.lock").exists():
            self._finish_interrupted_write()
        #: Sign the commits clmgit makes (`--sign`, or git's `commit.gpgSign`), with git's
        #: own signing settings (`gpg.format`, `user.signingKey`).
        self.sign = False

    @classmethod
    def mirror(cls, url: str, path: Path) -> GitRepo:
        """A bare mirror of `url` at `path`: cloned the first time, then fetched (pruned)."""
        if path.exists():
            args = ["fetch", "--quiet", "--prune", "origin", "+refs/heads/*:refs/heads/*"]
            cwd = path
        else:
            args, cwd = ["clone", "--quiet", "--bare", "--", url, str(path)], path.parent
        proc = run_git(args, cwd=cwd, ok=range(256))
        if proc.returncode != 0:
            raise GitError(f"cannot fetch the config repo {redact(url)}: "
                           f"{failure(args, proc.returncode, proc.stderr)}")
        return cls(path)

    # --- reading ---------------------------------------------------------------------------

    def run(self, *args: str, stdin: bytes | None = None, ok: Collection[int] = (0,),
            env: Mapping[str, str] | None = None) -> str:
        """A git command's output; its failure becomes a GitError with git's own words."""
        return self._run(args, stdin=stdin, ok=ok, env=env).stdout.decode(errors="replace")

    def _run(self, args: Sequence[str], *, stdin: bytes | None = None,
             ok: Collection[int] = (0,),
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        return run_git(args, cwd=self.workdir or self.git_dir, stdin=stdin, ok=ok,
                       env={**self._identity_env, **(env or {})})

    def rev(self, ref: str) -> str | None:
        """The commit SHA of a ref or SHA prefix, or None if there is none."""
        return self.object_id(f"{ref}^{{commit}}")

    def branch_sha(self, branch: str) -> str | None:
        return self.rev(f"refs/heads/{branch}")

    @property
    def location(self) -> str:
        return str(self.workdir or self.git_dir)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Answers for full SHAs are kept: they never change, and on a long history with many
        merges each costs a walk (0.6 s on kubernetes-on-aws)."""
        if ancestor == descendant:
            return True
        key = (ancestor, descendant)
        if key in self._ancestry:
            return self._ancestry[key]
        answer = self._run(["merge-base", "--is-ancestor", ancestor, descendant],
                           ok=(0, 1)).returncode == 0
        if len(ancestor) == len(descendant) == 40:
            self._ancestry[key] = answer
        return answer

    def read_file(self, ref: str, path: str) -> bytes | None:
        """A file's bytes at a ref, from the object database; None if it is not there."""
        found = self._objects.read([f"{ref}:{path}"])[0]
        return found.data if found is not None and found.kind == "blob" else None

    @functools.cached_property
    def _objects(self) -> gitobjects.ObjectReader:
        """One `git cat-file --batch` for the files this repository reads, stopped when the
        repository is dropped (GitPython's readers sit in reference cycles: only a collection
        of the whole heap would stop their processes)."""
        from clmgit.adapters.gitobjects import ObjectReader  # it builds on this module

        return ObjectReader(self.git_dir)

    def list_files(self, ref: str, directory: str) -> list[str]:
        """Paths of the files below `directory` at `ref`, sorted."""
        out = self.run("ls-tree", "-r", "--name-only", "-z", ref, "--", directory.rstrip("/") + "/")
        return sorted(p for p in out.split("\0") if p)

    def commit_time(self, sha: str) -> str:
        return self.run("show", "-s", "--format=%cI", sha).strip()

    def log(
        self,
        revs: str | Sequence[str],
        *,
        paths: Iterable[str] = (),
        limit: int | None = None,
        no_merges: bool = False,
        grep: str | None = None,
    ) -> list[Commit]:
        """Commits of a range, newest first, with their full messages (with `grep`: only those
        with a line of the message matching that regular expression)."""
        args = ["log", "--format=%H%x1f%an%x1f%aI%x1f%B%x1e"]
        if grep:
            args.append(f"--grep={grep}")
        if limit:
            args.append(f"-n{limit}")
        if no_merges:
            args.append("--no-merges")
        revs = [revs] if isinstance(revs, str) else list(revs)
        out = self.run(*args, *revs, "--", *paths)
        return list(_parse_log(out))

    def rev_list(self, rev: str) -> list[str]:
        """Every commit reachable from `rev`, in the order `log` shows them."""
        return self.run("rev-list", rev).split()

    def count(self, revs: str | Sequence[str], *, paths: Iterable[str] = ()) -> int:
        revs = [revs] if isinstance(revs, str) else list(revs)
        return int(self.run("rev-list", "--count", *revs, "--", *paths).strip() or 0)

    def subtree(self, rev: str, path: str) -> str | None:
        """The tree object id of directory `path` at `rev`; None where it is absent."""
        return self.subtrees([rev], path)[0]

    def subtrees(self, revs: Sequence[str], path: str) -> list[str | None]:
        """`subtree` of many commits, answered by one `cat-file --batch-check`."""
        if not revs:
            return []
        names = "".join(f"{rev}:{path.rstrip('/')}\n" for rev in revs)
        out = self.run("cat-file", "--batch-check=%(objectname) %(objecttype)",
                       stdin=names.encode())
        answers = []
        for line in out.splitlines():
            oid, _, kind = line.partition(" ")
            answers.append(oid if kind == "tree" else None)
        return answers

    def subtrees_in_history(self, rev: str, path: str) -> frozenset[str]:
        """Every tree `path` had in a commit reachable from `rev`.

        A tree first appears in a commit that differs there from at least one of its parents,
        so the commits `rev-list --full-history -- path` lists (plus `rev`) hold all of them;
        one batch then reads their subtrees. On an 11k-commit history this takes about a second,
        against minutes for a per-commit walk.
        """
        key = (rev, path)
        if key not in self._history_trees:
            listed = self.run("rev-list", "--full-history", rev, "--", path).split()
            trees = self.subtrees([rev, *listed], path)
            self._history_trees[key] = frozenset(t for t in trees if t)
        return self._history_trees[key]

    def object_types(self, oids: Sequence[str]) -> dict[str, str | None]:
        """The type of each object (`commit`, `tag`, `tree`, `blob`); None where it is missing."""
        if not oids:
            return {}
        out = self.run("cat-file", "--batch-check=%(objecttype)",
                       stdin="".join(f"{oid}\n" for oid in oids).encode())
        kinds = [line.split()[-1] for line in out.splitlines()]
        return {oid: kind if kind in _OBJECT_TYPES else None  # missing, ambiguous
                for oid, kind in zip(oids, kinds, strict=True)}

    def object_id(self, ref: str) -> str | None:
        """The id of the object `ref` names, not peeled (a tag stays a tag); None if none."""
        out = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", ref,
                       ok=(0, 1, 128))
        return out.strip() or None

    def describe_object(self, oid: str, kind: str | None) -> str:
        """`an annotated tag of commit <sha>`, `a tree`: what a non-commit is, for a refusal
        that says which commit was meant."""
        if kind == "tag":
            target = self.rev(oid)
            return f"an annotated tag of commit {target}" if target else "an annotated tag"
        return f"a {kind or 'missing object'}"

    def merge_base(self, a: str, b: str) -> str | None:
        """Their best common ancestor; None when they have none (or one is not a commit)."""
        return self.run("merge-base", a, b, ok=range(256)).strip() or None

    def changed_paths(self, old: str, new: str, path: str) -> list[str]:
        """Files below `path` that differ between two commits."""
        out = self.run("diff", "--name-only", "-z", old, new, "--", path)
        return sorted(p for p in out.split("\0") if p)

    def current_branch(self) -> str | None:
        if self.workdir is None:
            return None
        return self.run("symbolic-ref", "--quiet", "--short", "HEAD", ok=(0, 1)).strip() or None

    def dirty(self, paths: Iterable[str]) -> list[str]:
        """Paths among `paths` with staged or unstaged changes in the working tree."""
        if self.workdir is None:
            return []
        # GIT_OPTIONAL_LOCKS=0: a look must not rewrite the index (git refreshes it otherwise).
        out = self.run("status", "--porcelain", "-z", "--untracked-files=no", "--", *paths,
                       env={"GIT_OPTIONAL_LOCKS": "0"})
        return [entry[3:] for entry in out.split("\0") if entry[3:]]

    # --- writing ---------------------------------------------------------------------------

    def make_commit(self, parent: str, files: Mapping[str, bytes], message: str) -> str:
        """A commit on top of `parent` with `files` replaced, in the object database only."""
        with tempfile.TemporaryDirectory(prefix="clmgit-index-") as tmp:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            self.run("read-tree", parent, env=env)
            for path, data in files.items():
                blob = self.run("hash-object", "-w", "--stdin", "--path", path, stdin=data,
                                env=env).strip()
                self.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = self.run("write-tree", env=env).strip()
        return self.run("commit-tree", *self._signing, tree, "-p", parent, "-F", "-",
                        stdin=message.encode()).strip()

    @property
    def _signing(self) -> tuple[str, ...]:
        return ("-S",) if self.sign else ()

    def merge_commit(self, *, head: str, new: str, message: str, tree: str | None = None
                     ) -> str:
        """A commit with parents `head` and `new` and exactly `new`'s tree (or `tree`): a branch
        at `head` moves to `new`'s content without rewriting history (a promotion merge)."""
        return self.run("commit-tree", *self._signing, tree or f"{new}^{{tree}}", "-p", head,
                        "-p", new, "-F", "-",
                        stdin=message.encode()).strip()

    def merge_tree(self, ours: str, theirs: str) -> tuple[str, list[str]]:
        """The tree of git's three-way merge of two commits, written to the object database
        only, and the files that conflict (none: the tree is the merge)."""
        out = self.run("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z",
                       ours, theirs, ok=(0, 1))
        tree, *conflicts = [p for p in out.split("\0") if p]
        return tree.strip(), sorted(set(conflicts))

    @functools.cached_property
    def _identity_env(self) -> dict[str, str]:
        """Fall back to a clmgit identity where git has none configured (CI runners)."""
        env: dict[str, str] = {}
        out = run_git(["config", "--get-regexp", r"^user\.(name|email)$"],
                      cwd=self.workdir or self.git_dir, ok=(0, 1)).stdout.decode(errors="replace")
        configured = {line.partition(" ")[0] for line in out.splitlines()}
        if not os.environ.get("GIT_AUTHOR_NAME") and "user.name" not in configured:
            env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "clmgit"
        if not os.environ.get("GIT_AUTHOR_EMAIL") and "user.email" not in configured:
            env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = "clmgit@localhost"
        return env

    def update_refs(self, updates: Iterable[RefUpdate], *, ours: Sequence[str] = ()) -> None:
        """Move refs atomically, each only if it still points where the plan saw it.

        The refs move first, in one transaction, so a run that lost a race to another writer
        fails there with nothing changed. A moved branch that is checked out here then has its
        index and files brought along under git's own index lock (so no other git command sees
        them half-way), by a two-tree merge that refuses to overwrite local changes; if it
        refuses, the refs are moved back. A branch checked out in another worktree is refused
        up front: that checkout would be left behind its branch, as if its change were undone.
        `ours` are files whose uncommitted content is what the new commit holds (clmgit wrote
        them): they are staged as they are, so that the checkout takes the commit over them.
        """
        updates = list(updates)
        if not updates:
            return
        here = self.current_branch()
        self._refuse_other_worktrees(updates)
        synced = [u for u in updates if here and u.ref == f"refs/heads/{here}" and u.old]
        if not synced:
            self._transaction(updates)
            return
        (moved,) = synced
        assert moved.old is not None
        with self._index_lock() as index:
            if self.current_branch() != here:  # switched before we held the lock
                raise RefusedError(f"the checkout at {self.workdir} switched branches while "
                                   "clmgit was writing; nothing changed — run the command again")
            # What follows, said in the lock before the ref moves: a run killed between the
            # ref and the index leaves it, and the next clmgit finishes the sync.
            _write_intent(index, _Intent(moved.ref, moved.old, moved.new, tuple(ours)))
            self._transaction(updates)
            try:
                self._sync_index(index, moved.old, moved.new, ours)
            except ClmgitError:
                self._transaction(updates, undo=True)
                raise

    def _transaction(self, updates: Sequence[RefUpdate], *, undo: bool = False) -> None:
        """All refs move or none does. A ref found elsewhere than expected is a lost race,
        said as such (git's own words name a lock file)."""
        lines = "".join(_transaction_line(u, undo=undo) for u in updates)
        args = ["update-ref", "--stdin"]
        proc = self._run(args, stdin=f"start\n{lines}commit\n".encode(), ok=range(256))
        if proc.returncode == 0:
            return
        for u in updates:
            expected = (u.new if undo else u.old) or None
            now = self.rev(u.ref)
            if now != expected:
                name = u.ref.removeprefix("refs/heads/")
                raise RefusedError(
                    f"branch {name!r} moved to {(now or 'nothing')[:7]} while clmgit was "
                    f"writing (another run?); nothing changed here — run the command again")
        raise GitError(failure(args, proc.returncode, proc.stderr))

    def _refuse_other_worktrees(self, updates: Sequence[RefUpdate]) -> None:
        here = self.workdir.resolve() if self.workdir else None
        path = None
        for line in self.run("worktree", "list", "--porcelain").splitlines():
            key, _, value = line.partition(" ")
            if key == "worktree":
                path = Path(value).resolve()
            elif key == "branch" and path != here and any(u.ref == value for u in updates):
                raise RefusedError(
                    f"branch {value.removeprefix('refs/heads/')!r} is checked out in {path}, "
                    "which clmgit would leave behind its branch; switch that checkout to "
                    "another branch first")

    @contextlib.contextmanager
    def _index_lock(self) -> Iterator[Path]:
        """Hold git's `index.lock` (git's commands wait or fail while it exists); yields the
        index's path. A lock left by a killed git is named, never removed behind its back; one
        left by a killed clmgit says so in its content (git's locks hold an index, which starts
        `DIRC`), and is taken over once that process is gone."""
        index = Path(self.run("rev-parse", "--path-format=absolute", "--git-path",
                              "index").strip())
        lock = index.with_name(index.name + ".lock")
        deadline = time.monotonic() + INDEX_LOCK_WAIT
        while True:
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
                try:
                    os.write(fd, _lock_marker(os.getpid()))
                finally:
                    os.close(fd)
                break
            except FileExistsError:
                if _left_by_dead_clmgit(lock):
                    lock.unlink(missing_ok=True)
                    continue
                if time.monotonic() > deadline:
                    raise RefusedError(
                        f"{lock} exists: another git command is using the checkout at "
                        f"{self.workdir}; retry when it is done (or delete the file if none "
                        "is running)") from None
                time.sleep(0.05)
        try:
            yield index
        finally:
            lock.unlink(missing_ok=True)

    def _finish_interrupted_write(self) -> None:
        """A clmgit killed after moving the checked-out branch and before its index and files
        followed leaves its lock, with the sync it was doing (`_Intent`): finish that sync, so
        that the checkout is not left behind its branch (its index would hold the old commit,
        a revert the next `git commit -a` would land). Done under the lock, taken over."""
        lock = self.git_dir / "index.lock"
        if not _left_by_dead_clmgit(lock):
            return
        intent = _read_intent(lock)
        with self._index_lock() as index:
            if (intent is not None and self.current_branch() == intent.ref.removeprefix(
                    "refs/heads/") and self.rev(intent.ref) == intent.new):
                log.info("finishing the checkout of %s left by a killed clmgit", intent.ref)
                self._sync_index(index, intent.old, intent.new, intent.ours)

    def _sync_index(self, index: Path, old: str, new: str, ours: Sequence[str] = ()) -> None:
        """Bring index and files from `old` to `new` in a copy of the index, then put the copy
        in place in one rename; a refusal leaves the index untouched. A file of `ours` that
        differs from `new` after all (changed since it was read) makes git refuse. The copy's
        stat data is refreshed first: a file touched, or a checkout copied (a CI cache), is not
        a local change, and git compares stat data before contents."""
        scratch = index.with_name(f"{index.name}.clmgit-{os.getpid()}")
        if index.exists():
            shutil.copyfile(index, scratch)
        try:
            self._run(["update-index", "-q", "--refresh"], env={"GIT_INDEX_FILE": str(scratch)},
                      ok=range(256))
            if ours:
                self.run("update-index", "--add", "--", *ours,
                         env={"GIT_INDEX_FILE": str(scratch)})
            proc = self._run(["read-tree", "-m", "-u", old, new],
                             env={"GIT_INDEX_FILE": str(scratch)}, ok=range(256))
            if proc.returncode != 0:
                raise RefusedError(
                    f"the checkout at {self.workdir} has local changes to files this would "
                    f"update ({failure(['read-tree'], proc.returncode, proc.stderr)}); commit "
                    "or stash them first")
            os.replace(scratch, index)
        finally:
            scratch.unlink(missing_ok=True)

    def push(self, remote: str, updates: Iterable[RefUpdate]) -> None:
        """Push several refs in one atomic push (all land or none); nothing local changes here.

        Channel and control branches only fast-forward (they move back by a commit, never by
        rewriting them), so they are never force-pushed: the remote refuses a push if it has
        moved on. Only a `replaceable` branch is rewritten, with a lease on what we saw there.
        """
        updates = list(updates)
        options, refspecs = ["push", "--atomic", "--porcelain"], []
        for u in updates:
            if u.old is None or self.is_ancestor(u.old, u.new):
                refspecs.append(f"{u.new}:{u.ref}")
            elif u.replaceable:
                seen = self.rev(u.ref.replace("refs/heads/", f"refs/remotes/{remote}/", 1))
                options.append(f"--force-with-lease={u.ref}:{seen or u.old}")
                refspecs.append(f"+{u.new}:{u.ref}")
            else:
                raise RefusedError(
                    f"moving {u.ref} from {u.old[:7]} to {u.new[:7]} would rewrite its "
                    "history; clmgit never force-pushes it"
                )
        args = [*options, "--", remote, *refspecs]
        proc = self._run(args, ok=range(256))
        if proc.returncode != 0:
            raise PushRejectedError(
                f"push to {remote} was rejected ({failure(args, proc.returncode, proc.stderr)}); "
                "nothing changed locally — run the command again (it fetches first)")
        for u in updates:
            if u.ref.startswith("refs/heads/"):
                tracking = u.ref.replace("refs/heads/", f"refs/remotes/{remote}/", 1)
                self.run("update-ref", tracking, u.new)

    def remote_sha(self, remote: str, ref: str) -> str | None:
        """Where `ref` points on `remote` right now (asks the remote)."""
        out = self.run("ls-remote", "--", remote, ref).strip()
        for line in out.splitlines():
            sha, _, name = line.partition("\t")
            if name == ref:
                return sha
        return None

    def has_remote(self, name: str) -> bool:
        return name in self.run("remote").split()


def _transaction_line(u: RefUpdate, *, undo: bool) -> str:
    if not undo:
        return f"update {u.ref} {u.new} {u.old or ZERO}\n"
    if u.old is None:
        return f"delete {u.ref} {u.new}\n"
    return f"update {u.ref} {u.old} {u.new}\n"


def _parse_log(out: str) -> Iterator[Commit]:
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, author, date, message = record.split("\x1f", 3)
        subject, _, body = message.strip().partition("\n")
        yield Commit(sha=sha, subject=subject, author=author, date=date, body=body.strip())


def trailer_pairs(message_body: str) -> list[tuple[str, str]]:
    """`Key: value` trailers of a commit message's last paragraph, in order, repeats kept."""
    last = message_body.strip().split("\n\n")[-1]
    pairs = []
    for line in last.splitlines():
        key, sep, value = line.partition(": ")
        if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", key):
            pairs.append((key, value.strip()))
    return pairs


def trailers(message_body: str) -> dict[str, str]:
    """The trailers as a mapping; a repeated key keeps its last value."""
    return dict(trailer_pairs(message_body))


def _lock_marker(pid: int) -> bytes:
    return f"clmgit-lock pid={pid} ns={process_namespace()}\n".encode()


def _left_by_dead_clmgit(lock: Path) -> bool:
    """Whether `lock` was made by a clmgit process that is known to have ended (see
    `process_is_gone`: of this boot and PID namespace only)."""
    try:
        text = lock.read_bytes()[:200].decode("ascii", errors="replace")
    except OSError:
        return False
    match = re.match(r"clmgit-lock pid=(\d+) ns=(\S*)\n", text)
    return match is not None and process_is_gone(int(match.group(1)), match.group(2))


@dataclass(frozen=True)
class _Intent:
    """The sync a clmgit holding the index lock is about to do: `ref` (checked out) from `old`
    to `new`, with the files of `ours` staged first."""

    ref: str
    old: str
    new: str
    ours: tuple[str, ...]


def _write_intent(index: Path, intent: _Intent) -> None:
    lock = index.with_name(index.name + ".lock")
    line = json.dumps({"ref": intent.ref, "old": intent.old, "new": intent.new,
                       "ours": list(intent.ours)})
    with lock.open("ab") as f:
        f.write(f"{line}\n".encode())
        f.flush()
        os.fsync(f.fileno())


def _read_intent(lock: Path) -> _Intent | None:
    """The intent in a lock of clmgit's, None if there is none (or it was cut short)."""
    try:
        lines = lock.read_bytes().decode(errors="replace").splitlines()
        raw = json.loads(lines[1]) if len(lines) > 1 else None
        return None if raw is None else _Intent(raw["ref"], raw["old"], raw["new"],
                                                 tuple(raw["ours"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
