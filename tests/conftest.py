"""Suite-wide test settings and the fixtures several test modules share.

Hypothesis: no per-example deadline and no too-slow health check, because a loaded CI machine makes
both fail on speed, not on behaviour. Under CI (the `CI` variable is set) the examples are also
derandomized, so a run on main is reproducible; locally every run explores new examples.

Fixtures: `daemon` (a real `mrpvm serve` on loopback with its own home, one per module), `http` (an
httpx client on it), `registry` (the supervisor test plugins of tests/support/supervisor_support.py, one per
module), `browser` (a headless Chromium driven by Playwright, one per module; skipped with the reason
where none is installed: tests/support/web_support.py); `pg_cluster`, `pg_url`, `store_env` (a throwaway
PostgreSQL: tests/support/pg_support.py; `store_env` runs a test once per store backend).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import httpx
import pytest
from api_support import Daemon
from hypothesis import HealthCheck, settings
from mrpvm.kernel.registry import Registry
from supervisor_support import build_registry
from web_support import browser_or_skip

# Supervisors a test starts without a home of its own write plugin logs under the kernel home: never the
# developer's ~/.mrpvm. (Tests that need a home give theirs explicitly; subprocesses inherit this one.)
os.environ.setdefault("MRPVM_HOME", tempfile.mkdtemp(prefix="mrpvm-test-home-"))

settings.register_profile(
    "mrpvm",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
    print_blob=True,
)
settings.load_profile("mrpvm")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with Daemon(tmp_path_factory.mktemp("home")) as d:
        yield d


@pytest.fixture
def http(daemon: Daemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


@pytest.fixture(scope="module")
def browser():
    yield from browser_or_skip()


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL cluster for the session (tests/support/pg_support.py)."""
    from pg_support import Cluster

    cluster = Cluster()
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test (dropped afterwards)."""
    name = pg_cluster.new_database()
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_env(request, tmp_path) -> dict[str, str]:
    """The environment a store test runs under, once per backend: {} (SQLite in the home) or
    MRPVM_STORE_URL naming a fresh PostgreSQL database. `Store.open(home, store_env)` opens it."""
    if request.param == "sqlite":
        return {}
    return {"MRPVM_STORE_URL": request.getfixturevalue("pg_url")}
