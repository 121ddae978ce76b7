"""A full disk under the kernel home: a clear error naming the cause and the remedy, never a traceback nor
a second ROLLBACK hiding the first error; `mrpvm kb rm` frees space; the daemon answers 507.

The end-to-end test mounts a small tmpfs as the home (root, as in CI); the store test needs no mount.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import Daemon
from cli_support import cli_env, mrpvm
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.errors import DiskFull
from mrpvm.kernel.store import Store

DOC = PROJECT_ROOT / "examples" / "tessel-build.md"
QUESTION = "How do I clean a broken cache?"


def test_a_full_database_is_disk_full_and_the_store_stays_usable(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    try:
        store.create_kb("first")
        conn = store._conn()
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own SQLITE_FULL, no mount needed
        with pytest.raises(DiskFull) as caught:
            for i in range(10_000):
                store.create_kb(f"kb-{i}-" + "x" * 100)
        message = str(caught.value)
        assert message.startswith("disk full:") and "mrpvm kb rm NAME" in message
        assert "rollback" not in message.lower()
        assert not conn.in_transaction  # rolled back once, cleanly
        conn.execute("PRAGMA max_page_count = 1000000")
        assert store.get_kb("first").name == "first" and store.create_kb("after").name == "after"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        store.close()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path) -> None:
    """Fill the filesystem holding `folder` to the last byte, with a file there."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "filler.bin", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass


def _said(proc: subprocess.CompletedProcess) -> str:
    text = proc.stdout.decode() + proc.stderr.decode()
    assert "Traceback" not in text, text
    assert "cannot rollback" not in text, text
    return text


def test_a_full_disk_is_said_and_kb_rm_frees_it(small_disk: Path) -> None:
    home = small_disk / "home"
    env = cli_env(home)
    assert mrpvm(env, "ingest", "--kb", "small", str(DOC), timeout=180).returncode == 0
    big = mrpvm(env, "kb", "create", "big")
    assert big.returncode == 0, big.stderr
    with Store.open(home) as store:
        kbs = {"big": store.get_kb("big").id}
    daemon = Daemon(home)  # started while there is room: it holds the database open
    daemon.start(timeout=120)
    try:
        # the KB's indexes hold the space (as a large KB's do): its artifacts fill the disk
        _fill(home / "artifacts" / kbs["big"] / "kb-fast")
        with daemon.client() as http:
            reply = http.post("/sessions", json={"kb": "small"})
            assert reply.status_code == 507, reply.text
            assert reply.json()["code"] == "DISK_FULL" and "free space" in reply.json()["message"]
            assert http.get("/kbs").status_code == 200  # reading still works
    finally:
        daemon.stop()

    asked = mrpvm(env, "ask", "--kb", "small", QUESTION, timeout=180)
    text = _said(asked)
    assert asked.returncode != 0 and "DISK_FULL" in text and "mrpvm kb rm" in text, text

    removed = mrpvm(env, "kb", "rm", "big")
    assert removed.returncode == 0, _said(removed)
    assert not (home / "artifacts" / kbs["big"]).exists()
    answer = mrpvm(env, "ask", "--kb", "small", QUESTION, timeout=180)
    assert answer.returncode == 0 and "tessel" in _said(answer)
    with sqlite3.connect(home / "mrpvm.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert os.statvfs(small_disk).f_bavail > 0
