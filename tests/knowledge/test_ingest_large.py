"""A 1 MB source through the real sd-symbolic (chunked), and a kernel process killed with SIGKILL mid-ingest."""

from __future__ import annotations

import json
import os
import random
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.store import Store
from mrpvm.kernel.store_rows import text_hash
from mrpvm.knowledge.ingest import ingest_source
from test_ingest import PLUGINS, prose, run_kernel, sentences_of

CEILING = 256 * 1024  # sd-symbolic's input ceiling in this test, so the 1 MB source is chunked


def synthetic_document(target_bytes: int, seed: int = 11) -> str:
    """Markdown with headings and paragraphs of varied, unique sentences (deterministic)."""
    rng = random.Random(seed)
    nouns = [
        "reactor",
        "valve",
        "pump",
        "turbine",
        "sensor",
        "cable",
        "router",
        "ledger",
        "harbor",
        "bridge",
        "tunnel",
        "orchard",
        "engine",
        "circuit",
    ]
    verbs = [
        "feeds",
        "controls",
        "monitors",
        "depends on",
        "supports",
        "drives",
        "protects",
        "cools",
        "measures",
    ]
    adjectives = [
        "primary",
        "secondary",
        "cold",
        "hot",
        "redundant",
        "old",
        "modern",
        "northern",
        "quiet",
        "rapid",
    ]
    parts, size, section = [], 0, 0
    while size < target_bytes:
        section += 1
        parts.append(f"## Section {section}: the {rng.choice(nouns)} {rng.choice(nouns)}s")
        for _ in range(rng.randint(2, 5)):
            sentences = [
                f"The {rng.choice(adjectives)} {rng.choice(nouns)} number {section}-{rng.randrange(10**6)} "
                f"{rng.choice(verbs)} the {rng.choice(nouns)} of sector {rng.randrange(1000)}."
                for _ in range(rng.randint(2, 6))
            ]
            parts.append(" ".join(sentences))
        size = sum(len(p) + 2 for p in parts)
    return "\n\n".join(parts) + "\n"


def normalized(text: str) -> str:
    return " ".join(text.split())


def test_a_1mb_source_ingests_completely_through_the_real_sd_symbolic(tmp_path):
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    sd = json.loads((MANIFESTS_DIR / "sd-symbolic.json").read_text())
    sd["maxInputSizeBytes"] = CEILING
    (manifests / "sd-symbolic.json").write_text(json.dumps(sd))
    for name in ("test-kb.json", "test_kb.py"):
        shutil.copy(PLUGINS / name, manifests / name)
    # a real kb index over the whole tree too
    shutil.copy(MANIFESTS_DIR / "kb-fast.json", manifests / "kb-fast.json")
    text = synthetic_document(1 << 20)
    assert len(text.encode()) >= 1 << 20

    async def work(ctx):
        kb = ctx.store.create_kb("big")
        result = await ingest_source(ctx, kb, "big.md", text, sd_plugin="sd-symbolic")
        return kb, result, ctx.store.kb_units(kb.id)

    kb, result, units = run_kernel(
        tmp_path / "home", work, enabled="sd-symbolic,test-kb", manifests=manifests
    )
    assert result.chunks >= 4 and result.warnings == [] and result.notified == ["test-kb"]
    assert result.unitCount == len(units) and result.bytes == len(text.encode())
    assert len({u.id for u in units}) == len(units)
    assert [u.kuType for u in units].count("aggregate") == 1
    atomic_text = "\n".join(normalized(u.textBody or u.body) for u in units if u.kuType == "atomic")
    prose_sentences = [
        s for block in text.split("\n\n") if not block.startswith("#") for s in sentences_of(block)
    ]
    assert len(prose_sentences) > 5000
    missing = [s for s in prose_sentences if normalized(s) not in atomic_text]
    assert missing == []
    recorded = (tmp_path / "home" / "artifacts" / kb.id / "test-kb" / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["units"] for line in recorded] == [len(units)]


# --------------------------------------------------------------------------- SIGKILL mid-ingest


class Driver:
    """tests/support/ingest_plugins/kill_driver.py as a real kernel process in its own process group."""

    def __init__(self, home: Path, files: tuple[Path, Path], start: int, sd: str = "test-sd-big"):
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-u",
                str(PLUGINS / "kill_driver.py"),
                str(home),
                str(PLUGINS),
                *map(str, files),
                str(start),
                sd,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            text=True,
        )
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.lines: list[str] = []

    def wait_for(self, prefix: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = self.proc.stdout.readline()
                if not line:
                    raise AssertionError(f"the driver exited early: {self.lines}")
                self.lines.append(line.strip())
                if line.startswith(prefix):
                    return line.strip()
        raise AssertionError(f"no '{prefix}' line within {timeout} s: {self.lines}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait(timeout=10) == -signal.SIGKILL
        try:  # plugin workers leave on EOF; make sure none of the group we started outlives the test
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.stdout.close()
        self.selector.close()


def assert_store_holds(home: Path, version: str) -> None:
    """The store reopens, is consistent, and holds exactly `version` of the source."""
    store = Store.open(home)
    try:
        assert store.integrity_check() == []
        kb = store.get_kb("docs")
        source = store.get_source(kb.id, "source.md")
        units = store.kb_units(kb.id)
        assert source.hash == text_hash(version)
        assert (
            store.kb_stats(kb.id) == {"sources": 1, "units": source.unitCount}
            and len(units) == source.unitCount
        )
        assert sorted(u.claim for u in units if u.kuType == "atomic") == sorted(sentences_of(version))
    finally:
        store.close()


@pytest.mark.parametrize("sd", ["test-sd-big", "test-sd-big-compact"])
def test_a_kernel_killed_mid_ingest_leaves_the_last_committed_state(tmp_path, sd):
    """Killed mid-ingest, nothing committed is lost, whichever form the sd-plugin answers in (CNL, or the
    compact reply of protocol/SPEC.md)."""
    home = tmp_path / "home"
    files = (tmp_path / "a.md", tmp_path / "b.md")
    versions = (prose(1200, "alpha"), prose(1100, "beta"))
    for path, text in zip(files, versions, strict=True):
        path.write_text(text)

    # 1. killed inside the store transaction of version B: version A stays
    driver = Driver(home, files, start=0, sd=sd)
    assert driver.wait_for("committed 0").endswith(text_hash(versions[0]))
    driver.wait_for("writing 1")
    time.sleep(0.2)  # the slowed transaction takes well over a second
    driver.kill()
    assert not any(line.startswith("written 1") for line in driver.lines)
    assert_store_holds(home, versions[0])

    # 2. killed while the sd-plugin normalizes version B: version A stays
    driver = Driver(home, files, start=1, sd=sd)
    driver.wait_for("normalizing 1")
    time.sleep(0.1)
    driver.kill()
    assert_store_holds(home, versions[0])

    # 3. the store is writable again: B commits, then a kill inside A's transaction leaves B
    driver = Driver(home, files, start=1, sd=sd)
    assert driver.wait_for("committed 1").endswith(text_hash(versions[1]))
    driver.wait_for("writing 2")
    time.sleep(0.2)
    driver.kill()
    assert not any(line.startswith("written 2") for line in driver.lines)
    assert_store_holds(home, versions[1])
