"""LocalLLMServer's lifecycle (shells/local_llm.py) against a fake `llama_cpp.server` (same flags, real
HTTP on loopback, real child processes): readiness, the api key, the scrubbed environment, clear errors
with the log tail, and no orphans — after stop, after a failed start, and when the kernel is SIGKILLed.
The real llama.cpp server is exercised by tests/live (make test-live).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mrpvm.shells import local_llm as local
from mrpvm.shells.local_llm import LocalLLMError, LocalLLMServer

FAKE_DIR = Path(__file__).resolve().parents[1] / "support" / "local_llm_fake"
FAKE = "fake_llama_server"


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, within_s: float = 10.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def setup(tmp_path: Path, mode: str, **env: str) -> tuple[dict[str, str], Path]:
    model = tmp_path / "model.gguf"
    model.write_text(mode)
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(FAKE_DIR),
        "MRPVM_HOME": str(tmp_path / "home"),
        **env,
    }
    return environ, model


def server(environ: dict[str, str], model: Path, **kwargs) -> LocalLLMServer:
    return LocalLLMServer(environ, model=model, server_module=FAKE, **kwargs)


def test_serves_behind_a_random_key_with_a_scrubbed_env_and_stops_its_process_group(tmp_path):
    environ, model = setup(tmp_path, "spawn", MRPVM_LLM_API_KEY="upstream-secret", CLOUD_TOKEN="tok-123")

    async def main():
        async with server(environ, model) as llm:
            url, key = llm.base_url, llm.api_key
            async with httpx.AsyncClient(trust_env=False) as client:
                good = await client.get(f"{url}/models", headers={"Authorization": f"Bearer {key}"})
                bad = await client.get(f"{url}/models")
            own = llm.kernel_environ({**environ, "MRPVM_PLUGIN_TIMEOUT_MS": "5000"})
            return url, key, good, bad, llm.kernel_environ(), own, llm.load_s, llm.log_path

    url, key, good, bad, kernel_env, own, load_s, log_path = anyio.run(main)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert good.status_code == 200 and good.json()["data"][0]["id"] == "model"
    assert bad.status_code == 401
    assert kernel_env["MRPVM_LLM_BASE_URL"] == url and kernel_env["MRPVM_LLM_API_KEY"] == key
    assert kernel_env["CLOUD_TOKEN"] == "tok-123"  # the kernel's own environ is kept
    # the slow local model gets longer plugin/request timeouts, unless the user configured them
    assert (kernel_env["MRPVM_PLUGIN_TIMEOUT_MS"], kernel_env["MRPVM_REQUEST_TIMEOUT_MS"]) == (
        "60000",
        "240000",
    )
    assert (own["MRPVM_PLUGIN_TIMEOUT_MS"], own["MRPVM_REQUEST_TIMEOUT_MS"]) == ("5000", "240000")
    assert load_s is not None and load_s > 0
    log = log_path.read_text()
    assert "mode spawn" in log
    assert "MRPVM_LLM_API_KEY" not in log and "CLOUD_TOKEN" not in log and "MRPVM_HOME" not in log
    server_pid = int(Path(f"{model}.pid").read_text())
    child_pid = int(Path(f"{model}.child").read_text())
    assert wait_gone(server_pid) and wait_gone(child_pid)


def test_a_server_that_exits_is_a_clear_error_with_the_log_tail(tmp_path):
    environ, model = setup(tmp_path, "crash")
    with pytest.raises(LocalLLMError) as caught:
        anyio.run(server(environ, model).start)
    err = caught.value
    assert err.code == "LOCAL_LLM_UNAVAILABLE"
    assert "exited (code 3)" in err.message and "scripted crash" in err.message
    assert not alive(int(Path(f"{model}.pid").read_text()))


def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path):
    environ, model = setup(tmp_path, "silent")
    with pytest.raises(LocalLLMError, match="did not answer within 1 s") as caught:
        anyio.run(server(environ, model, startup_timeout_s=1.0).start)
    assert "mode silent" in caught.value.message  # the log tail
    assert wait_gone(int(Path(f"{model}.pid").read_text()))


@pytest.mark.parametrize("mode", ["ok", "stubborn"])
def test_the_server_dies_with_a_sigkilled_kernel(tmp_path, mode):
    """Also a server that ignores SIGTERM (uvicorn waits for an in-flight completion, a minute or more on a
    busy CPU): the kernel's death kills it."""
    environ, model = setup(tmp_path, mode)
    script = (
        "import anyio, sys\n"
        "from pathlib import Path\n"
        "from mrpvm.shells.local_llm import LocalLLMServer\n"
        f"env = {environ!r}\n"
        "async def main():\n"
        f"    async with LocalLLMServer(env, model=Path({str(model)!r}), server_module={FAKE!r}) as llm:\n"
        "        print(llm.pid, flush=True)\n"
        "        await anyio.sleep(600)\n"
        "anyio.run(main)\n"
    )
    kernel = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(kernel.stdout.readline())
        assert alive(pid)
        kernel.send_signal(signal.SIGKILL)
        kernel.wait()
        assert wait_gone(pid), "the llama server outlived its kernel"
    finally:
        kernel.kill()
        kernel.wait()
        kernel.stdout.close()


def test_missing_packages_or_model_say_how_to_install(tmp_path, monkeypatch):
    environ = {"MRPVM_HOME": str(tmp_path / "home"), "MRPVM_LOCAL_LLM_MODEL": str(tmp_path / "no.gguf")}
    monkeypatch.setattr(local, "missing_packages", lambda: ["llama-cpp-python[server]"])
    with pytest.raises(LocalLLMError, match="make local-llm"):
        anyio.run(LocalLLMServer(environ).start)
    monkeypatch.setattr(local, "missing_packages", lambda: [])
    with pytest.raises(LocalLLMError, match="MRPVM_LOCAL_LLM_MODEL .*no.gguf is not a file"):
        anyio.run(LocalLLMServer(environ).start)
    assert local.model_path({"MRPVM_HOME": "/x"}) == Path("/x/models/SmolLM2-135M-Instruct.Q4_1.gguf")


def test_a_key_that_starts_with_a_dash_still_reaches_the_server(tmp_path):
    """Regression: `--api_key -x…` made argparse read the key as a flag (1 start in ~64 failed)."""
    environ, model = setup(tmp_path, "spawn")

    async def main():
        llm = server(environ, model)
        llm.api_key = "-starts-with-a-dash"
        async with llm, httpx.AsyncClient(trust_env=False) as client:
            headers = {"Authorization": f"Bearer {llm.api_key}"}
            return (await client.get(f"{llm.base_url}/models", headers=headers)).status_code

    assert anyio.run(main) == 200
