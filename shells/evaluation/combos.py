"""The pinned plugin combinations `mrpvm eval --matrix` compares when a suite lists none of its own, and
the kernel environment of a combination that switches plugins off.

The standard set answers the question the LLM path raises: does a model help, and where? Symbolic only
(no LLM anywhere), an LLM seed detector with the symbolic solver, the fast LLM solver alone, and the
LLM solver and the symbolic one each under val-llm. The knowledge stage is left to the engine in all of
them (every kb-plugin is symbolic). Pinning collapses a stage to one plugin, so a pinned LLM solver that
fails has no fallback: these runs measure the paths themselves; the engine's own run measures choosing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrpvm.kernel.errors import BadInput
from mrpvm.shells.evaluation.suites import PluginCombo, Suite

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

SYMBOLIC_ONLY = "symbolic-only"
STANDARD_COMBOS: tuple[PluginCombo, ...] = (
    PluginCombo(
        label=SYMBOLIC_ONLY,
        seedDetectorPlugin="sd-symbolic",
        goalSolverPlugin="gs-symbolic",
        disabledPlugins=["val-llm"],
    ),
    PluginCombo(
        label="sd-llm+gs-symbolic",
        seedDetectorPlugin="sd-llm-fast",
        goalSolverPlugin="gs-symbolic",
        disabledPlugins=["val-llm"],
    ),
    PluginCombo(
        label="gs-llm-fast",
        seedDetectorPlugin="sd-symbolic",
        goalSolverPlugin="gs-llm-fast",
        disabledPlugins=["val-llm"],
    ),
    PluginCombo(
        label="gs-llm-fast+val-llm",
        seedDetectorPlugin="sd-symbolic",
        goalSolverPlugin="gs-llm-fast",
        validatorPlugin="val-llm",
    ),
    PluginCombo(
        label="gs-symbolic+val-llm",
        seedDetectorPlugin="sd-symbolic",
        goalSolverPlugin="gs-symbolic",
        validatorPlugin="val-llm",
    ),
)


def standard_combo(label: str) -> PluginCombo | None:
    return next((c for c in STANDARD_COMBOS if c.label == label), None)


def suite_combos(suite: Suite, only: list[str] | None = None) -> list[PluginCombo]:
    """The suite's own pluginCombos, else the standard set; `only` keeps the combos with these labels."""
    combos = list(suite.spec.pluginCombos) or list(STANDARD_COMBOS)
    if not only:
        return combos
    unknown = [label for label in only if label not in {c.name() for c in combos}]
    if unknown:
        known = ", ".join(c.name() for c in combos)
        raise BadInput(
            "BAD_COMBO", f"no plugin combo {', '.join(unknown)!s} for {suite.folder} (known: {known})"
        )
    return [c for c in combos if c.name() in only]


def enabled_environ(ctx: KernelContext, environ: dict[str, str], disabled: list[str]) -> dict[str, str]:
    """`environ` with MRPVM_ENABLED_PLUGINS set to the context's enabled plugins less `disabled`."""
    unknown = [p for p in disabled if p not in ctx.registry]
    if unknown:
        raise BadInput("BAD_COMBO", f"disabledPlugins names unknown plugins: {', '.join(unknown)}")
    enabled = [p for p in ctx.config.plugins.enabled if p not in disabled]
    return {**environ, "MRPVM_ENABLED_PLUGINS": ",".join(enabled)}


def resolve_combo(text: str | None) -> PluginCombo | None:
    """`--combo`: None (the engine chooses), `SD,KB,GS` pins, or the label of a standard combo."""
    from mrpvm.shells.evaluation.suites import parse_combo

    if text is None:
        return None
    if "," not in text:
        found = standard_combo(text.strip())
        if found is None:
            labels = ", ".join(c.label for c in STANDARD_COMBOS)
            raise BadInput(
                "BAD_COMBO", f"--combo takes SD,KB,GS or a standard combo ({labels}), got {text!r}"
            )
        return found
    pins = parse_combo(text)
    return PluginCombo(seedDetectorPlugin=pins.sd, kbPlugin=pins.kb, goalSolverPlugin=pins.gs)
