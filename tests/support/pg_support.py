"""A throwaway PostgreSQL cluster for the store tests: `initdb` and `pg_ctl` in a temporary folder, listening
only on a Unix socket there, trust authentication, stopped and removed at the end of the session.

The server refuses to run as root, so as root (CI) it runs as the `postgres` user the Debian package
creates (`runuser`), owning the folder; otherwise as the current user. Each test gets its own database
(`Cluster.new_database`), dropped afterwards. Without the server binaries the tests are skipped saying
why, except under CI (`CI` set), where they fail: .ci/run installs Debian's `postgresql`.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SUPERUSER = "mrpvm"
_counter = itertools.count()


def server_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


class Cluster:
    def __init__(self) -> None:
        bindir = server_bindir()
        if bindir is None:
            message = "PostgreSQL server binaries not found (Debian: apt-get install postgresql)"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        self.bindir = bindir
        self.base = Path(tempfile.mkdtemp(prefix="mrpvm-pg-"))
        self.data, self.socket = self.base / "data", self.base / "sock"
        self.socket.mkdir()
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            for path in (self.base, self.socket):
                os.chown(path, owner.pw_uid, owner.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-k {self.socket} -c listen_addresses='' -c fsync=off -c max_connections=300"
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.base / "server.log"), "-w", "start"
        )
        self.admin_url = self.url("postgres")

    def _run(self, tool: str, *args: str) -> None:
        out = subprocess.run(
            [*self.prefix, str(self.bindir / tool), *args], capture_output=True, text=True, timeout=120
        )
        if out.returncode != 0:
            raise RuntimeError(f"{tool} failed: {out.stdout}\n{out.stderr}")

    def url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self) -> str:
        name = f"t{os.getpid()}_{next(_counter)}"
        self._admin(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)
