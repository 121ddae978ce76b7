"""Live tests: the kernel against a real llama.cpp server (SmolLM2-135M-Instruct) started by LocalLLMServer.

They need `make local-llm`; without it every live test is skipped with that reason on a developer's
machine, and FAILS in CI (CI set), where .ci/run installs the model first: a skipped live test must never
pass for a run (the default `make test` deselects them with `-m "not live"`). One server serves the
whole session.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the live tests: .ci/run runs `make local-llm` first)")
    pytest.skip(reason)


def _not_installed() -> str | None:
    from mrpvm.shells import local_llm as local

    missing = local.missing_packages()
    if missing:
        return f"local LLM not installed (missing {', '.join(missing)}): run `make local-llm`"
    return None


@pytest.fixture(scope="session")
def local_llm(tmp_path_factory):
    """A running LocalLLMServer (its own event loop in a portal thread); skips when not installed."""
    reason = _not_installed()
    if reason:
        _unavailable(reason)
    from anyio.from_thread import start_blocking_portal
    from mrpvm.shells import local_llm as local

    # where `make local-llm` put it: MRPVM_LOCAL_LLM_MODEL, else the default home (tests/conftest.py points
    # MRPVM_HOME at a scratch folder for every test, so the user's home is named here)
    model = local.model_path(
        {"MRPVM_LOCAL_LLM_MODEL": os.environ.get("MRPVM_LOCAL_LLM_MODEL", ""), "HOME": str(Path.home())}
    )
    if not model.is_file():
        _unavailable(f"no local LLM model at {model}: run `make local-llm`")
    home = tmp_path_factory.mktemp("local-llm-home")
    environ = {**os.environ, "MRPVM_HOME": str(home), "MRPVM_LOCAL_LLM_MODEL": str(model)}
    with start_blocking_portal() as portal:
        server = local.LocalLLMServer(environ)
        portal.call(server.start)
        try:
            yield server
        finally:
            portal.call(server.stop)
