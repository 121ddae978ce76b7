"""The plugin sandbox: every plugin process runs inside bubblewrap (Debian package `bubblewrap`).

What a sandboxed plugin sees (bwrap: new user, pid, mount, ipc and uts namespaces, all capabilities
dropped — `--cap-drop ALL`, which a root caller needs, or bwrap keeps them —, no_new_privs, killed with
its parent; whole-sandbox process and memory limits: cgroups.py):
- read-only: /usr (and the /bin, /lib... links into it), a few files of /etc (loader cache, time zone,
  CA certificates, passwd/group, resolver), the interpreter it needs (for `python`: the kernel's own
  prefixes, site-packages and the mrpvm protocol/plugins folders; for another program: its folder or
  prefix, or only its file when that folder would be a home or one of its direct children),
  its own plugin folder, and `readPaths` from the config;
- read-write: its artifacts folder(s), a private /tmp (tmpfs), and `writePaths` from the config;
- its own /proc (its processes only) and a minimal /dev;
- nothing of the kernel home: a tmpfs is mounted over it (the database, the config, other plugins'
  artifacts stay out of sight even when the home lies inside a folder that is bound);
- no network: its own network namespace holding only its own loopback. A plugin whose manifest says
  `usesLLM` reaches the kernel's LLM endpoint and nothing else: once the kernel routes the endpoint
  (`route_llm`, done by KernelContext when an upstream is configured), the sandbox runs llm_relay.py
  first, which listens on the endpoint's loopback address inside the namespace and forwards to the
  endpoint's Unix socket (bound in at RELAY_SOCKET). So no plugin can reach the daemon, other local
  services or the internet, token or not. With no route, an LLM plugin has no network either (with no
  upstream it answers `unsupported` anyway).
Every process of the sandbox dies with it: bwrap is pid 1 of the plugin's pid namespace, and when the
plugin exits (or is killed) the kernel kills everything left in that namespace — a child that called
setsid included. A warm worker outlives its calls, so after each reply the supervisor kills whatever
the worker left running (strays.py, within SWEEP_INTERVAL_S).

Where bwrap is missing or cannot create namespaces (user namespaces disabled, a container without the
privilege), the kernel says so once at start (`announce`) and in `sandbox_status()`, and plugins run with
the basic isolation: own session, scrubbed environment, limits. `engine.sandbox.mode`: `auto` (the
default: sandbox when possible), `require` (refuse to start plugins without it), `off`.

The kernel process also makes itself non-dumpable (`protect_kernel`), so a process of the same user
cannot read its memory or /proc/<pid>/environ (effective where plugins are not root; the sandbox is what
protects a root kernel).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import msgspec
from mrpvm.kernel.config import LimitsConfig, SandboxConfig

from . import cgroups
from .limits_status import LimitsStatus
from .sandbox_binds import _covered, _inside, _minimal, _program_roots, _system_binds, python_roots

MECHANISM = "bubblewrap"
TMP_BYTES = 256 << 20  # the private /tmp of a plugin
RELAY_SCRIPT = Path(__file__).with_name("llm_relay.py")
RELAY_PATH = "/run/mrpvm/llm_relay.py"  # where the relay script and the endpoint's socket appear inside
RELAY_SOCKET = "/run/mrpvm/llm.sock"
NAMESPACES = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
# bwrap keeps every capability (inside the sandbox's namespaces) for a caller that is real root unless told
# to drop them: a root kernel's plugins could then remount their read-only binds read-write or unmount the
# tmpfs hiding the kernel home. Dropped for everyone, so a plugin never holds one, whoever runs the kernel.
NO_CAPABILITIES = ("--cap-drop", "ALL")

_BASIC = ["own session (process group killed with the call)", "scrubbed environment", "rlimit memory"]
_SANDBOXED = [
    "bubblewrap: user, pid, mount, ipc, uts namespaces; no capabilities; no_new_privs",
    "filesystem: /usr, the interpreter, the plugin folder (read-only), its artifacts (read-write)",
    "the kernel home (database, config, other plugins' artifacts) hidden",
    "no network: a private network namespace; an LLM plugin's reaches only the kernel's LLM endpoint",
    "every process of the sandbox dies with the call",
]


class LlmRoute(msgspec.Struct, frozen=True):
    """Where LLM plugins' calls go: the endpoint's loopback address (their `llm.baseUrl`) and the Unix
    socket the same endpoint serves (kernel/llm/endpoint.py), which the relay forwards to."""

    host: str
    port: int
    socket: str


class SandboxUnavailable(RuntimeError):
    """`engine.sandbox.mode` is `require` and this machine cannot sandbox plugins."""


class SandboxStatus(msgspec.Struct, kw_only=True):
    """What `mrpvm config show` and the start-up notice report."""

    mode: str  # configured: auto | require | off
    active: bool
    mechanism: str  # "bubblewrap 0.8.0", or "none"
    reason: str = ""  # why the sandbox is not active
    isolation: list[str] = []
    limits: LimitsStatus | None = None  # the whole-sandbox limits in force (cgroups.py)

    def notice(self) -> str:
        """One line for stderr: empty when the sandbox is active."""
        if self.active:
            return ""
        return (
            f"mrpvm: plugin sandbox not active ({self.reason}); plugins run with basic isolation only "
            f"({', '.join(_BASIC)}) and can read what the kernel's user can read"
        )


# --------------------------------------------------------------------------- the kernel process


@functools.cache
def protect_kernel() -> bool:
    """Make this process non-dumpable (PR_SET_DUMPABLE 0): no ptrace, no /proc/<pid>/environ or mem for
    other processes of the same user. Children are not affected (exec resets the flag)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        return False


_announced = False


def announce(status: SandboxStatus) -> None:
    """Say once per process, on stderr, that plugins run without the sandbox (never silently)."""
    global _announced
    if status.active or _announced:
        return
    _announced = True
    with contextlib.suppress(OSError, ValueError):
        print(status.notice(), file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- probing


@functools.cache
def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name, path=os.environ.get("PATH") or os.defpath)


_early: dict[str, threading.Thread] = {}  # bwrap -> the thread probing it ahead of the Sandbox
_kept: dict[str, str] = {}  # bwrap -> its label, from a positive probe kept in the home (probe_cache.py)


def probe_early(config: SandboxConfig, home: str | os.PathLike[str] | None = None) -> None:
    """Probe bubblewrap in a background thread, so its two short processes (~20 ms) overlap the kernel's
    start; `sandbox_status` uses its result. With the kernel `home`, a positive probe kept there under the
    same fingerprint (probe_cache.py) is the result and nothing runs; a new positive one is kept there."""
    if config.mode == "off":
        return
    bwrap = _which("bwrap")
    if bwrap is None or bwrap in _early or bwrap in _kept:
        return
    from . import probe_cache

    key = None if home is None else probe_cache.fingerprint(bwrap, _probe_argv(bwrap))
    label = None if home is None else probe_cache.load(os.fspath(home), key)
    if label is not None:
        _kept[bwrap] = label
        return
    args = (bwrap, None if home is None else os.fspath(home), key)
    _early[bwrap] = thread = threading.Thread(
        target=_probe_and_keep, args=args, name="sandbox-probe", daemon=True
    )
    thread.start()


def _probe_and_keep(bwrap: str, home: str | None, key: dict[str, object] | None) -> None:
    from . import probe_cache

    label, problem = _probe(bwrap)
    if not problem and home is not None:
        probe_cache.keep(home, key, label)


def _probed(bwrap: str) -> tuple[str, str]:
    kept = _kept.get(bwrap)
    if kept is not None:
        return kept, ""
    early = _early.get(bwrap)
    if early is not None:
        early.join()  # its result is in _probe's cache
    return _probe(bwrap)


def _probe_argv(bwrap: str) -> list[str]:
    """The sandbox the probe starts around `true`."""
    return [
        bwrap,
        *NAMESPACES,
        *NO_CAPABILITIES,
        "--unshare-net",
        "--die-with-parent",
        *_system_binds(),
        "--",
        "true",
    ]


@functools.cache
def _probe(bwrap: str) -> tuple[str, str]:
    """(version, problem): start a real sandbox around /bin/true once per process."""
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, timeout=10, check=False)
        label = version.stdout.decode(errors="replace").strip() or MECHANISM
        run = subprocess.run(_probe_argv(bwrap), capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return "", f"{bwrap} cannot run: {err}"
    if run.returncode != 0:
        said = run.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {run.returncode}"]
        return label, f"bubblewrap cannot create the namespaces here: {said[0]}"
    return label, ""


def sandbox_status(config: SandboxConfig | None = None, limits: LimitsConfig | None = None) -> SandboxStatus:
    """Whether plugins run sandboxed with this config on this machine, and why not (for `config show`);
    with `limits`, also which whole-sandbox limits are in force."""
    status = _status(config or SandboxConfig())
    if limits is not None:
        status.limits = cgroups.status(limits.pluginProcesses, limits.pluginMemoryMB, status.active)
    return status


def _status(config: SandboxConfig) -> SandboxStatus:
    if config.mode == "off":
        return SandboxStatus(
            mode="off",
            active=False,
            mechanism="none",
            reason="turned off by configuration (engine.sandbox.mode = off)",
            isolation=list(_BASIC),
        )
    bwrap = _which("bwrap")
    if bwrap is None:
        return SandboxStatus(
            mode=config.mode,
            active=False,
            mechanism="none",
            reason="bubblewrap is not installed (Debian: apt-get install bubblewrap)",
            isolation=list(_BASIC),
        )
    label, problem = _probed(bwrap)
    if problem:
        return SandboxStatus(
            mode=config.mode, active=False, mechanism="none", reason=problem, isolation=list(_BASIC)
        )
    return SandboxStatus(mode=config.mode, active=True, mechanism=label, isolation=list(_SANDBOXED))


class Sandbox:
    """Builds the command line that starts a plugin inside bubblewrap (or the plain one when inactive)."""

    def __init__(self, config: SandboxConfig | None = None, home: Path | str | None = None):
        from mrpvm.kernel.config import ConfigError, home_dir

        self.config = config or SandboxConfig()
        self.home = os.path.realpath(home) if home is not None else os.path.realpath(home_dir())
        for key, paths in (("readPaths", self.config.readPaths), ("writePaths", self.config.writePaths)):
            for path in paths:
                if _inside(os.path.realpath(path), self.home):
                    raise ConfigError(
                        f"engine.sandbox.{key}: {path} lies inside the kernel home {self.home}, "
                        "which plugins never see (an ancestor of the home is fine: the home stays hidden)"
                    )
        self.status = sandbox_status(self.config)
        if self.config.mode == "require" and not self.status.active:
            raise SandboxUnavailable(
                f"engine.sandbox.mode is 'require' but plugins cannot be sandboxed: {self.status.reason}"
            )
        self.active = self.status.active
        self._bwrap = _which("bwrap") if self.active else None
        self._prlimit = _which("prlimit")
        self._prefixes: dict[tuple[str, str, bool], list[str]] = {}
        self.llm_route: LlmRoute | None = None

    def route_llm(self, route: LlmRoute | None) -> None:
        """Let LLM plugins reach this endpoint (through the relay), or nothing (None)."""
        self.llm_route = route
        self._prefixes.clear()

    def relays(self, llm: bool) -> bool:
        """Whether a plugin (`llm`: its manifest declares usesLLM) starts behind the LLM relay."""
        return self.active and llm and self.llm_route is not None

    @classmethod
    def from_environment(cls) -> Sandbox:
        """The sandbox the effective configuration asks for (for entry points given no Sandbox)."""
        from mrpvm.kernel.config import ConfigError, home_dir, load_config

        try:
            config, _ = load_config()
        except ConfigError:
            return cls(SandboxConfig(), home_dir())
        return cls(config.engine.sandbox, config.home)

    def artifacts_problem(self, path: str) -> str | None:
        """Why an artifacts folder may not be bound read-write: it must not hold the kernel home."""
        real = os.path.realpath(path)
        inside_artifacts = _inside(real, os.path.join(self.home, "artifacts")) and real != os.path.join(
            self.home, "artifacts"
        )
        if _inside(self.home, real) or (_inside(real, self.home) and not inside_artifacts):
            return f"artifacts folder {path} would expose the kernel home {self.home}"
        return None

    def command(
        self,
        argv: list[str],
        cwd: Path | str,
        *,
        llm: bool,
        writable: Iterable[str] = (),
        readable: Iterable[str] = (),
        memory_bytes: int | None = None,
        processes: int | None = None,
    ) -> list[str]:
        """The argv to start: `argv` itself when inactive, else bwrap (under prlimit for the memory cap,
        applied before bwrap forks so every process of the sandbox inherits it); `llm`: the plugin
        declares usesLLM (it starts behind the relay when an endpoint is routed); `readable`: folders bound
        read-only (inside the hidden home too); `processes`: the
        RLIMIT_NPROC fallback (cgroups.py), set inside the sandbox's user namespace, where it counts
        the sandbox's own processes only."""
        if not self.active:
            return argv
        cwd = os.path.realpath(cwd)
        relay = self.relays(llm)
        key = (argv[0], cwd, relay)
        prefix = self._prefixes.get(key)
        if prefix is None:
            prefix = self._prefixes[key] = self._prefix(argv[0], cwd, relay)
        out = list(prefix)
        for path in writable:
            out += ["--bind", path, path]
        for path in readable:  # e.g. the plugin's units-file folder (handoff.py), inside the home
            out += ["--ro-bind", path, path]
        out += ["--remount-ro", self.home]  # the tmpfs over the home: only the binds in it are writable
        out += ["--chdir", cwd, "--"]  # bwrap adds PWD (the plugin folder) to the environment
        if processes and self._prlimit:
            out += [self._prlimit, f"--nproc={processes}", "--"]
        if relay:
            route = self.llm_route
            assert route is not None
            out += [sys.executable, "-I", "-S", RELAY_PATH, route.host, str(route.port), RELAY_SOCKET, "--"]
        out += argv
        if memory_bytes and self._prlimit:
            out = [self._prlimit, f"--as={memory_bytes}", "--", *out]
        return out

    def _prefix(self, program: str, cwd: str, relay: bool) -> list[str]:
        assert self._bwrap is not None
        args = [
            self._bwrap,
            *NAMESPACES,
            *NO_CAPABILITIES,
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
        ]
        args += _system_binds()
        args += ["--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
        bound = ["/usr"]
        interpreter = list(python_roots()) if relay else []  # the relay runs on the kernel's python
        readable = [
            p for p in _minimal([*_program_roots(program), *interpreter, cwd, *self.config.readPaths])
        ]
        writable = _minimal(self.config.writePaths)
        for path in readable:
            if not _covered(path, bound):
                args += ["--ro-bind", path, path]
        for path in writable:
            args += ["--bind", path, path]
        # Hide the home even when it lies inside a bound folder; then bring back a plugin folder that
        # lies inside it, never the home itself.
        args += ["--tmpfs", self.home]
        for path in readable:  # a plugin folder under the home (configured paths never are)
            if _inside(path, self.home) and path != self.home:
                args += ["--ro-bind", path, path]
        if relay:
            assert self.llm_route is not None
            args += [
                "--ro-bind",
                str(RELAY_SCRIPT),
                RELAY_PATH,
                "--ro-bind",
                self.llm_route.socket,
                RELAY_SOCKET,
            ]
        return args
