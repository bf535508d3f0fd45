"""Compiled template code, kept in memory and on disk, keyed by template path and content.

Compiling is most of the first render at a SHA (about 2 ms per template with Jinja), so the code
is kept: in memory for the life of the process (a file that did not change from one SHA to the
next is compiled once), and by default in `cache_dir("templates")`, so that a new process — a CLI
run, a CI shard, a restarted controller — loads what an earlier one compiled.

On disk there is one file per version of a template, named by a digest of the environment's
fingerprint, the path and the source checksum: versions at several SHAs live side by side, and
code compiled for another environment (other helpers, another Jinja) is never loaded. Versions
not loaded for `MAX_AGE` are removed. Writing a version costs a file creation (a fraction of a
millisecond), once per machine. The directory is the user's own cache, as trusted as the
installed code: what is in it is run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import signal
import threading
import time
from collections.abc import Sequence
from types import CodeType
from typing import BinaryIO, NoReturn

import jinja2

from clmgit.cache import cache_dir
from clmgit.config.cache import LruCache
from clmgit.machine import die_with_parent

MAX_AGE = 30 * 86400  # seconds
#: Fewer templates than this to compile are compiled by the renderer alone (a fork costs more).
AHEAD_MIN = 24
#: A compiling helper ends after this long, whatever it is doing (it is never waited for).
AHEAD_LIMIT = 120  # seconds
_DAY = 86400
_SUFFIX = ".code"


class CompiledCode(jinja2.BytecodeCache):
    """Jinja's bytecode cache interface over memory and (optionally) a directory. Jinja checks
    the checksum; the path is part of the key because the code carries it (for error lines)."""

    def __init__(self, size: int) -> None:
        self._codes: LruCache[tuple[str, str], CodeType] = LruCache(size)
        #: What the code depends on besides the source; set by the environment's module.
        self.fingerprint = ""
        self._disk: _DiskCode | None = None
        self._disk_chosen = False

    def use_disk(self, directory: str | os.PathLike[str] | None) -> None:
        self._disk = None if directory is None else _DiskCode(os.fspath(directory))
        self._disk_chosen = True

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        key = (bucket.key, bucket.checksum)
        bucket.code = self._codes.get(key)
        disk = self._disk_cache()
        if bucket.code is None and disk is not None:
            disk.load(bucket, self.fingerprint)
            if bucket.code is not None:
                self._codes.put(key, bucket.code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.code is None:
            return
        self._codes.put((bucket.key, bucket.checksum), bucket.code)
        disk = self._disk_cache()
        if disk is not None:
            disk.dump(bucket, self.fingerprint)

    def _disk_cache(self) -> _DiskCode | None:
        if not self._disk_chosen:
            self.use_disk(cache_dir("templates"))
        return self._disk


class _DiskCode:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._ready = False  # the directory made and pruned, once per process, on first write

    def load(self, bucket: jinja2.bccache.Bucket, fingerprint: str) -> None:
        try:
            with open(self._file(bucket, fingerprint), "rb") as f:
                bucket.load_bytecode(f)  # leaves no code if Jinja's magic or the checksum differ
                if bucket.code is not None:
                    _mark_used(f)
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            bucket.reset()  # missing or damaged: compiled again, and written anew

    def dump(self, bucket: jinja2.bccache.Bucket, fingerprint: str) -> None:
        path = self._file(bucket, fingerprint)
        tmp = f"{path}.{os.getpid()}-{threading.get_ident()}.tmp"
        try:
            self.prepare()
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), "wb") as f:
                bucket.write_bytecode(f)
            os.replace(tmp, path)  # readers in other processes see all of it or nothing
        except OSError:  # a cache that cannot be written only costs time
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def prepare(self) -> None:
        """Make the directory and prune it, once per process, before the first write."""
        if not self._ready:
            os.makedirs(self.directory, exist_ok=True)
            _prune(self.directory)
            self._ready = True

    def has(self, bucket: jinja2.bccache.Bucket, fingerprint: str) -> bool:
        return os.path.exists(self._file(bucket, fingerprint))

    def _file(self, bucket: jinja2.bccache.Bucket, fingerprint: str) -> str:
        name = f"{fingerprint}|{bucket.key}|{bucket.checksum}"
        return os.path.join(self.directory, hashlib.sha256(name.encode()).hexdigest() + _SUFFIX)


def _mark_used(f: BinaryIO) -> None:
    """Renew the file's time (at most once a day, a cheap check) so that pruning spares it."""
    with contextlib.suppress(OSError):
        if time.time() - os.fstat(f.fileno()).st_mtime > _DAY:
            os.utime(f.fileno())


def _prune(directory: str) -> None:
    """Remove versions not loaded for `MAX_AGE`, and temporary files a killed process left;
    once per process, when it first writes (a process that only loads changes nothing)."""
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            age = now - entry.stat().st_mtime
            limit = MAX_AGE if entry.name.endswith(_SUFFIX) else _DAY
            if age > limit and entry.name.endswith((_SUFFIX, ".tmp")):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


#: The cache of every environment `templates.make_environment` makes.
COMPILED = CompiledCode(size=8192)


def use_compile_cache_dir(directory: str | os.PathLike[str] | None) -> None:
    """Keep compiled templates in `directory` instead of the default cache directory (None:
    in memory only)."""
    COMPILED.use_disk(directory)


def compile_ahead(env: jinja2.Environment, sources: Sequence[tuple[str, str]], *,
                  helpers: int) -> int:
    """Start up to `helpers` forked processes that compile `sources` — (name, text) in the order
    a render will load them — from the end into the disk cache, while the caller renders from
    the start. The caller loads what a helper finished and compiles the rest itself; a helper
    skips what is on disk already, so the two meet in the middle and nobody waits for anybody.
    Returns how many helpers were started (none without a disk cache, a fork, or enough to do).

    A helper only compiles and writes files; it ends on its own, at the latest after
    `AHEAD_LIMIT` seconds or with its parent, and is reaped by a daemon thread."""
    disk = COMPILED._disk_cache()
    if disk is None or helpers < 1 or not hasattr(os, "fork"):
        return 0
    todo = [(name, text) for name, text in sources
            if not disk.has(_bucket(env, name, text), COMPILED.fingerprint)]
    if len(todo) < AHEAD_MIN:
        return 0
    try:
        disk.prepare()
    except OSError:
        return 0
    backwards = todo[::-1]
    parent = os.getpid()
    for n in range(helpers):
        pid = os.fork()
        if pid == 0:
            die_with_parent(parent)
            _compile_share(env, backwards[n::helpers], disk, COMPILED.fingerprint)
        threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True,
                         name="clmgit-compile-reaper").start()
    return helpers


def _bucket(env: jinja2.Environment, name: str, text: str) -> jinja2.bccache.Bucket:
    """The bucket Jinja's loader asks the cache for (our loaders use the name as file name)."""
    return jinja2.bccache.Bucket(env, COMPILED.get_cache_key(name, name),
                                 COMPILED.get_source_checksum(text))


def _compile_share(env: jinja2.Environment, share: Sequence[tuple[str, str]], disk: _DiskCode,
                   fingerprint: str) -> NoReturn:
    """A helper's whole life: compile what is not on disk yet, write it, leave at once (no
    cleanup of the parent's objects, no flushing of its buffers)."""
    try:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # ends the helper, even if stuck on a lock
        signal.alarm(AHEAD_LIMIT)
        for name, text in share:
            bucket = _bucket(env, name, text)
            if disk.has(bucket, fingerprint):
                continue
            try:
                bucket.code = env.compile(text, name, name)
            except Exception:  # noqa: BLE001 - the renderer reports it, with file and line
                continue
            disk.dump(bucket, fingerprint)
    finally:
        os._exit(0)


def fingerprint(env: jinja2.Environment) -> str:
    """What compiled code depends on besides the source: the environment's kind and settings and
    the names it resolves when compiling (Jinja's and Python's versions are checked by Jinja)."""
    parts = [type(env).__name__, str(env.optimized), str(env.finalize is not None),
             jinja2.__version__, *sorted(getattr(env, "intercepted_binops", ())), "|",
             *sorted(env.filters), "|", *sorted(env.tests), "|", *sorted(env.globals)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
