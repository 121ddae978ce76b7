"""KernelContext: the wiring every kernel entry point shares (config, registry, supervisor, store, home).

The CLI, the demo, the HTTP daemon and the tests open one context, run turns or ingests through it, and
close it. Nothing here knows about plugins' algorithms.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread
from mrpvm.protocol.vocab import PLUGIN_TYPES

from .background import Background
from .config import MANIFESTS_DIR, Config, load_config, wrapper_dirs
from .registry import PluginEntry, Registry, announce_registry

if TYPE_CHECKING:  # the store and supervisor import nothing from here; keep import cost at open()
    from .llm import LLMBridge
    from .store import Store
    from .supervisor import Supervisor
    from .supervisor.sandbox import LlmRoute
    from .validator_records import ValidatorRecords

SESSION_ARTIFACTS = "_session"
LLM_STAGE_TYPES = ("sd-plugin", "mrp-plan-plugin", "gs-plugin", "val-plugin")


class KernelContext:
    """One kernel's shared state. Open with `await KernelContext.open()`; close with `aclose()`.

    `llm` is the kernel's one LLM bridge; with no MRPVM_LLM_BASE_URL it is None (the bridge and its HTTP
    client are not even imported), plugins get `llm: null` and the LLM plugins of the turn stages are
    neither planned nor started (`llm_idle`). `background` holds the plugin calls turns left running after answering
    (recordOutcome); `aclose` waits for them before it stops the workers.
    """

    def __init__(
        self,
        config: Config,
        config_sources: dict[str, str],
        registry: Registry,
        supervisor: Supervisor,
        store: Store,
        home: Path,
        environ: dict[str, str] | None = None,
        llm: LLMBridge | None = None,
    ):
        self.config = config
        self.config_sources = config_sources
        self.registry = registry
        self.supervisor = supervisor
        self.store = store
        self.home = home
        self.environ = dict(os.environ if environ is None else environ)
        self._artifacts: dict[tuple[str | None, str], Path] = {}  # (kb id, plugin id) -> folder
        self._enabled_by_type: dict[str, list[PluginEntry]] = {}  # plugin type -> enabled entries
        self._warm_kbs: set[str | None] | None = None  # once `warm`ed: the KBs whose folders the pools bind
        self.llm = llm
        self.background = Background()
        # the home's validator records, read at a turn's first validation; None again after eval records more
        self.validator_records: ValidatorRecords | None = None

    @classmethod
    async def open(
        cls,
        environ: dict[str, str] | None = None,
        *,
        manifests_dir: Path | None = None,
        extra_env: dict[str, str] | None = None,
        opened: Callable[[KernelContext], object] | None = None,
        starting: Callable[[Supervisor], object] | None = None,
    ) -> KernelContext:
        """Load the config, the registry (built-ins from `manifests_dir`), start the supervisor, open the
        store, start the LLM bridge (its loopback endpoint serves only when an upstream is configured).
        `opened(ctx)` runs as soon as the context can start workers, before the one-time merges of older
        homes' files (a one-turn process starts its workers there: engine/warm_start.py).
        `starting(supervisor)` runs earlier, as soon as the supervisor exists, before the store opens (20-30 ms
        on a fresh home) and the LLM bridge starts: for a worker whose start is on the critical path and that
        needs neither (an ingest's sd-plugin without an LLM: shells/cli/ingest.py). A worker of an LLM plugin
        started there is retired when the LLM route is set; workers started there are stopped if the open fails.

        The KB layer's start-up repair is not run here: `mrpvm.knowledge.context.open_context` opens a
        context and then lets the KB layer open its part."""
        from .llm import configured
        from .planner_import import import_planner_files
        from .store import Store
        from .supervisor import Supervisor
        from .supervisor.sandbox import Sandbox, probe_early
        from .validator_records import import_legacy as import_validator_records

        config, sources = load_config(environ)
        probe_early(config.engine.sandbox, config.home)  # bubblewrap's probe (or the home's kept one)
        home = Path(config.home)
        home.mkdir(parents=True, exist_ok=True)
        registry = Registry.load(
            manifests_dir or MANIFESTS_DIR,
            wrapper_dirs(config),
            config.engine.pluginAllowlist,
            max_source_bytes=config.engine.limits.maxSourceBytes,
        )
        announce_registry(registry)
        sandbox = Sandbox(config.engine.sandbox, home)
        supervisor = Supervisor(registry, limits=config.engine.limits, extra_env=extra_env, sandbox=sandbox)
        try:
            if starting is not None:
                starting(supervisor)
            store = Store.open(home, environ)
        except BaseException:
            await supervisor.aclose()
            raise
        env = dict(os.environ if environ is None else environ)
        try:
            llm = None
            if configured(env):
                from .llm import LLMBridge

                llm = await LLMBridge.from_environ(env, store=store).start()
        except BaseException:
            try:
                await supervisor.aclose()
            finally:
                store.close()
            raise
        ctx = cls(config, sources, registry, supervisor, store, home, env, llm)
        supervisor.route_llm(llm_route(llm))
        try:  # planners' learning kept in files before the store kept it (schema 8), merged once
            if opened is not None:
                opened(ctx)
            planners = [entry.id for entry in registry.list("mrp-plan-plugin")]
            await anyio.to_thread.run_sync(import_planner_files, store, home, planners)
            await anyio.to_thread.run_sync(import_validator_records, store, home)
        except BaseException:
            await ctx.aclose()
            raise
        return ctx

    async def aclose(self, *, ending: bool = False, detach: bool = False) -> None:
        """Drain the background work, stop the plugins, close the LLM bridge and the store; `ending`: the
        process ends right after (a one-turn `mrpvm ask`: the store leaves its checkpoint to the next one);
        `detach`: only the workers' ends are left to after this process's (`Supervisor.aclose(detach=True)`),
        the store checkpoints as usual (`mrpvm ingest`: its large WAL is not left to the next command)."""
        try:
            try:
                await self.background.drain()  # nothing a turn started is lost
            finally:  # the workers' ends after this process's
                await self.supervisor.aclose(detach=ending or detach)
        finally:
            try:
                if self.llm is not None:
                    await self.llm.aclose()  # before the store: the bridge's cache lives in it
            finally:
                self.store.close(ending=ending)

    async def __aenter__(self) -> KernelContext:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def artifacts_dir(self, kb_id: str | None, plugin_id: str) -> Path:
        """`<home>/artifacts/<kbId or _session>/<pluginId>/` (not created here: the supervisor creates it
        when it binds it into a plugin's sandbox, else the plugin does)."""
        cache = self._artifacts
        key = (kb_id, plugin_id)
        path = cache.get(key)
        if path is None:
            path = cache[key] = self.home / "artifacts" / (kb_id or SESSION_ARTIFACTS) / plugin_id
        return path

    def enabled(self, plugin_type: str) -> list[PluginEntry]:
        """Enabled built-ins of a type (config order) plus every allow-listed wrapper of that type."""
        cache = self._enabled_by_type
        hit = cache.get(plugin_type)
        if hit is None:
            hit = cache[plugin_type] = self._enabled(plugin_type)
        return list(hit)

    def _enabled(self, plugin_type: str) -> list[PluginEntry]:
        out: list[PluginEntry] = []
        seen: set[str] = set()
        for plugin_id in self.config.plugins.enabled:
            if plugin_id in self.registry and plugin_id not in seen:
                entry = self.registry.get(plugin_id)
                if entry.type == plugin_type:
                    out.append(entry)
                    seen.add(plugin_id)
        for entry in self.registry.list(plugin_type):
            if not entry.builtin and entry.id not in seen:
                out.append(entry)
                seen.add(entry.id)
        return out

    @property
    def llm_available(self) -> bool:
        """An LLM upstream is configured and the bridge's loopback endpoint serves it."""
        return self.llm is not None and self.llm.available

    def llm_idle(self) -> list[str]:
        """Enabled plugins of the turn stages (sd, planner, gs, val) that use an LLM, when none is available:
        they could only answer `unsupported`, so turns do not plan them and the kernel does not start them.
        kb-plugins are kept (one that uses an LLM still indexes and retrieves)."""
        if self.llm_available:
            return []
        return [
            entry.id
            for plugin_type in LLM_STAGE_TYPES
            for entry in self.enabled(plugin_type)
            if entry.manifest.usesLLM
        ]

    async def warm(self) -> dict[str, int]:
        """Start the whole pool of every enabled worker plugin a turn or an ingest may call (not the
        `llm_idle` ones): the daemon does this at start, so its first load does not pay for workers
        starting midway. Plugin id -> workers started; a plugin that cannot start is left to its first
        call (which reports why)."""
        from .supervisor import PluginCallError

        started: dict[str, int] = {}
        for plugin_id in self._warm_ids():
            try:
                started[plugin_id] = await self.supervisor.warm(plugin_id)
            except PluginCallError:
                started[plugin_id] = 0
        self._warm_kbs = set()
        return started

    def _warm_ids(self) -> list[str]:
        idle = set(self.llm_idle())
        return [
            entry.id
            for plugin_type in PLUGIN_TYPES
            for entry in self.enabled(plugin_type)
            if entry.id not in idle and entry.manifest.worker
        ]

    async def warm_kb(self, kb_id: str | None) -> None:
        """After `warm` (a daemon): on the first turn on a KB, every warm pool binds that KB's artifacts
        folders at once. A sandboxed worker cannot gain a mount, so a plugin's first call naming a new KB's
        folder retires its workers (supervisor/binds.py): a plugin first called on a KB in the middle of a load
        (planner-depth once the planner lead moves to it) restarted its pool inside a user's turn then
        (session 28: buildPlan 250-410 ms, ~0.4 s of CPU). A pool that binds the folder already is left as is."""
        kbs = self._warm_kbs
        if kbs is None or kb_id in kbs:
            return  # every turn after the first on the KB: before the import below (~µs a turn)
        from .supervisor import PluginCallError

        kbs.add(kb_id)
        for plugin_id in self._warm_ids():
            with contextlib.suppress(PluginCallError):  # left to the plugin's first call, which says why
                await self.supervisor.warm(plugin_id, artifacts=str(self.artifacts_dir(kb_id, plugin_id)))

    def is_enabled(self, plugin_id: str) -> bool:
        entry = self.registry.get(plugin_id) if plugin_id in self.registry else None
        return entry is not None and any(e.id == plugin_id for e in self.enabled(entry.type))


def llm_route(llm: LLMBridge | None) -> LlmRoute | None:
    """The route sandboxed LLM plugins take to the bridge's loopback endpoint (None: none serves), for
    `Supervisor.route_llm`."""
    from .supervisor.sandbox import LlmRoute

    address = llm.endpoint_address if llm is not None else None
    socket_path = llm.unix_socket if llm is not None else None
    if address is None or socket_path is None:
        return None
    return LlmRoute(host=address[0], port=address[1], socket=socket_path)
