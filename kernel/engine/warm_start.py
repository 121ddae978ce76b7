"""The workers a one-turn process starts before its turn, so their starts overlap what comes first.

A cold `mrpvm ask --source FILE` first loads the file through the sd-plugin, then plans, retrieves and
solves; each plugin's worker used to start when its first call came (a kb-plugin that loads the sentence
model takes ~0.5 s of a quiet 2-core machine). `prestart_turn` starts, right after the kernel context
opens, one worker of each plugin the turn is expected to call:

- the planner: the pin, else the one the turn will lead with (the ranking of the home's planner records
  the turn itself makes: after a weak answer the lead may move to another planner);
- the sd- and gs-plugins: the pin, else the one most of the recent turns led by that planner used
  (`Store.usual_turn_plugins`), else the first of the configured stage order (plugins the turn would not
  plan — the LLM plugins without an endpoint — never);
- the kb-plugin: the pin, else the one most of the recent turns led by that planner used, else (a home's
  first ask) the first of the configured kb order. Not the latest turn's alone: a turn's kb-plugin is the
  one whose view answered, the fallback's after a weak first view (40 % of the cold `--source` asks of the
  dev questions), while the next plan mostly puts the same kb-plugin first again. Without history the
  configured first is as good a guess as a window's usual one: the plans of 102 cold asks put it first 96
  times (94 %, the window's rate; bench/ISSUE22_FIGURES.md, perf57), and a weak first view of another
  kb-plugin falls back to it; a wrong guess costs one worker start (~45 ms of CPU, perf57), the right one
  takes its start off the critical path of a home's first ask (perf63);
- beside those, any plugin two thirds of those recent turns called (`Store.usually_called_plugins`):
  where most first kb views were weak, the fallback kb-plugin, which otherwise starts only once the first
  view has failed, alone and on the turn's critical path (~70 ms of a quiet 2-core machine's ~0.45 s ask).
  A worker started for nothing costs about half of what one started late does (bench/ISSUE22_FIGURES.md:
  session 30 perf50, +72 vs -119 ms): worth it above a ~40 % rate; two thirds leaves a margin for how
  roughly a window's rate foretells the next question.

The workers it starts are recorded for the next one-turn process, which launches them before it imports
the kernel (supervisor/early_launch.py); this function adopts those it starts and stops the others. Once
the turn has committed, `record_next` records again what the next turn is expected to call, from the
records this turn updated.
A guess only starts a worker earlier; the turn's plan still decides every call (`Supervisor.prestart`
leaves whatever stands in the way to the call itself). The process's session notices wait for the
plugins' next calls (knowledge/notify.py `hold_session_notices(defer=True)`), so loading the source never
waits for a worker that is still starting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..supervisor import early_launch
from .planner_rank import order_planners, planner_base
from .state import PIN_TYPES, check_pins, static_of

if TYPE_CHECKING:
    from mrpvm.protocol.envelope import Pins

    from ..context import KernelContext

STAGE_ORDER = ("sd", "planner", "kb", "gs")  # the order of a turn's first calls to them


def expected_plugins(
    ctx: KernelContext,
    pins: Pins,
    previous: dict[str, str] | None = None,
    called: list[str] | None = None,
) -> list[str]:
    """One plugin id per stage the turn is expected to call first, in the order of their first calls (sd:
    the `--source` files and detectSeeds; the planner; kb; gs), which is the order they start in and, from
    the record, the order the next one-turn process launches them in (the first needed gets the cores first).
    The planner is the pin, else the one the turn will lead with (`leading_planner`); the others follow
    `previous` (stage -> plugin id), by default the plugins most of the home's recent turns that planner led
    used (`Store.usual_turn_plugins`): the kb-plugin a turn calls first is the one its planner's plan puts first.
    After them, any further plugin of an unpinned stage that `called` names (by default those two thirds of
    the recent turns that planner led called, `Store.usually_called_plugins`): a second kb-plugin most
    turns needed because their first view was weak starts beside the first, not after that view failed."""
    static = static_of(ctx)
    planners = static.enabled.get("mrp-plan-plugin", [])
    leading = pins.planner or leading_planner(ctx, planners)
    if previous is None:
        previous = ctx.store.usual_turn_plugins(led_by=leading)
    defaults = {
        "planner": [p for p in ctx.config.plugins.plannerOrder if p in planners] or planners,
        **static.default_orders,
    }
    out: list[str] = []
    for stage in STAGE_ORDER:
        enabled = static.enabled.get(PIN_TYPES[stage], [])
        pin = getattr(pins, stage)
        if pin:
            guess: str | None = pin
        elif stage == "planner" and leading:
            guess = leading
        elif previous.get(stage) in enabled:
            guess = previous[stage]
        else:  # the stage's configured first plugin is a fair guess (a home's first ask too: perf63)
            guess = next((p for p in defaults.get(stage, []) if p in enabled), None)
        if guess is not None and guess in enabled and guess not in out:
            out.append(guess)
    if called is None:
        called = ctx.store.usually_called_plugins(led_by=leading) if leading else []
    for plugin_id in called:
        of = next((s for s in STAGE_ORDER if plugin_id in static.enabled.get(PIN_TYPES[s], [])), None)
        if of is not None and not getattr(pins, of) and plugin_id not in out:
            out.append(plugin_id)
    return out


def leading_planner(ctx: KernelContext, planners: list[str]) -> str | None:
    """The planner an unpinned turn of a new session leads with: the ranking `rank_planners` makes from the
    home's planner records (a planner that answered weakly gives the lead to the next on evidence, so the
    planner of the last turn is not always the next turn's)."""
    base = planner_base(ctx.config.plugins.plannerOrder, planners)
    ranked = order_planners(base, ctx.store.planner_stats(), None)
    return ranked[0] if ranked else None


def prestart_turn(ctx: KernelContext, pins: Pins, kb: str | None = None) -> list[str]:
    """Start one worker of each expected plugin that has none yet (without waiting), its artifacts folder
    for the turn's KB `kb` (None: the session's) bound; the ids started.
    A pin naming no plugin of its stage raises the turn's UnknownPluginError first (nothing started)."""
    check_pins(ctx, pins)
    started = [
        p for p in expected_plugins(ctx, pins) if ctx.supervisor.prestart(p, str(ctx.artifacts_dir(kb, p)))
    ]
    early_launch.stop_all()  # what the previous process's record launched and this turn does not start
    key = early_launch.key_of(pins.planner, pins.sd, pins.kb, pins.gs)
    early_launch.record(
        ctx.home, key, {p: ctx.supervisor.launches[p] for p in started if p in ctx.supervisor.launches}
    )
    return started


def record_next(ctx: KernelContext, pins: Pins) -> list[str]:
    """After the turn's commit: record for the next one-turn process the workers its turn is expected to
    call, from the records this turn updated (a weak answer may move the lead to another planner, whose
    plans put another kb-plugin first). Each worker's launch is the one this process used, else the one
    already recorded; a plugin with neither is left out (that process starts it itself). The ids recorded."""
    key = early_launch.key_of(pins.planner, pins.sd, pins.kb, pins.gs)
    kept = early_launch.recorded(ctx.home)
    known = kept.get("workers") if kept is not None and kept.get("key") == key else None
    launches: dict[str, dict[str, object]] = {}
    for plugin_id in expected_plugins(ctx, pins):
        launch = ctx.supervisor.launches.get(plugin_id)
        if launch is None and isinstance(known, dict) and isinstance(known.get(plugin_id), dict):
            launch = known[plugin_id]
        if launch is not None:
            launches[plugin_id] = launch
    early_launch.record(ctx.home, key, launches)
    return list(launches)
