"""Live tests: the kernel against a real llama.cpp server (Gemma 3 270M base) started by LocalLLMServer.

They need `make local-llm`; without it every live test is skipped with that reason (live tests only —
the default `make test` deselects them with `-m "not live"`). One server serves the whole session.
"""

from __future__ import annotations

import os

import pytest


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
        pytest.skip(reason)
    from anyio.from_thread import start_blocking_portal
    from mrpvm.shells import local_llm as local

    try:
        model = local.assemble_model(os.environ)  # the user's home, where `make local-llm` put it
    except local.LocalLLMError as err:
        pytest.skip(f"local LLM model unavailable ({err.message}): run `make local-llm`")
    home = tmp_path_factory.mktemp("local-llm-home")
    environ = {**os.environ, "MRPVM_HOME": str(home), "MRPVM_LOCAL_LLM_MODEL": str(model)}
    with start_blocking_portal() as portal:
        server = local.LocalLLMServer(environ)
        portal.call(server.start)
        try:
            yield server
        finally:
            portal.call(server.stop)
