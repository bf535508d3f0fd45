"""A throw-away PostgreSQL server on 127.0.0.1 and a free port, for tests and benchmarks.

PostgreSQL refuses to run as root, and tests here run as root: when they do, `initdb` and
`pg_ctl` run as the unprivileged `postgres` user (through `runuser`), in a directory it owns.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from clmgit.errors import RegistryError

_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/local/bin")


def find_pg_ctl() -> str | None:
    """`pg_ctl` on PATH or where the distribution's packages put it."""
    found = shutil.which("pg_ctl")
    if found:
        return found
    candidates = [Path(d) / "pg_ctl" for d in _BIN_DIRS]
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return next((str(p) for p in candidates if p.is_file()), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """`with LocalPostgres() as pg: pg.create_database("x")` gives a postgresql:// URL."""

    def __init__(self) -> None:
        pg_ctl = find_pg_ctl()
        if pg_ctl is None:
            raise RegistryError("PostgreSQL is not installed: no pg_ctl was found")
        self._bin = Path(pg_ctl).parent
        self.port = _free_port()
        self._dir = Path(tempfile.mkdtemp(prefix="clmgit-pg-"))
        self._as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = [*(("runuser", "-u", "postgres", "--") if self._as_root else ()), *args]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RegistryError(
                f"{' '.join(args[:2])} failed with exit code {proc.returncode}: "
                f"{proc.stderr.strip() or proc.stdout.strip()}"
            )

    def start(self) -> LocalPostgres:
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        return self

    def _start(self) -> None:
        if self._as_root:
            shutil.chown(self._dir, "postgres", "postgres")
        data = self._dir / "data"
        self._run(
            str(self._bin / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
            "--no-sync", "-E", "UTF8",
        )
        self.resume()

    def resume(self) -> None:
        """Start the server (again, after `halt`), on the same port with the same data."""
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self._dir} -c fsync=off"
            " -c max_connections=100"
        )
        self._run(str(self._bin / "pg_ctl"), "-D", str(self._dir / "data"), "-o", options,
                  "-w", "-l", str(self._dir / "log"), "start")

    def halt(self) -> None:
        """Stop the server as a crash would (an outage drill); `resume` brings it back."""
        self._run(str(self._bin / "pg_ctl"), "-D", str(self._dir / "data"), "-m", "immediate",
                  "-w", "stop")

    def stop(self) -> None:
        try:
            self._run(str(self._bin / "pg_ctl"), "-D", str(self._dir / "data"), "-m", "immediate",
                      "-w", "stop")
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
