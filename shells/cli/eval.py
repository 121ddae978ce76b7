"""`mrpvm eval DIR... [--combo SD,KB,GS|LABEL | --matrix [--only LABEL]... | --passes N] [--local-llm]
[--deliberation-level N] [--json]`: run evaluation suites (DS021)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from mrpvm.kernel.budgets import MAX_DELIBERATION
from mrpvm.shells.cli.common import LocalLLMFlag

if TYPE_CHECKING:
    from mrpvm.shells.evaluation import EvalReport, QuestionResult, SuiteResult

ANSWER_PREVIEW = 90


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_suites)


def eval_suites(
    folders: Annotated[list[Path], typer.Argument(help="Suite folders (story.nl + eval.json each).")],
    combo: Annotated[
        str | None,
        typer.Option(
            "--combo",
            help="Pin SD,KB,GS plugin ids for every question ('-' leaves a stage to the engine), or name "
            "a standard combo (symbolic-only, sd-llm+gs-symbolic, gs-llm-fast, gs-llm-fast+val-llm, "
            "gs-symbolic+val-llm). Without it the engine's planners choose.",
        ),
    ] = None,
    matrix: Annotated[
        bool,
        typer.Option(
            "--matrix",
            help="Also run each suite under every plugin combo its eval.json lists (pluginCombos; else "
            "the standard combos) and print the runs side by side.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="With --matrix: run only the combos with this label (repeatable)."),
    ] = None,
    passes: Annotated[
        int,
        typer.Option(
            "--passes",
            min=1,
            help="Run the suites this many times with the engine choosing, the planners learning across "
            "suites and passes (the home is put back after); the report shows each pass and the "
            "planners' records before and after.",
        ),
    ] = 1,
    deliberation_level: Annotated[
        int | None,
        typer.Option(
            "--deliberation-level",
            min=0,
            max=MAX_DELIBERATION,
            help="Deliberation level of every question (0-3).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    local_llm: LocalLLMFlag = False,
) -> None:
    """Evaluate suites: one session per suite, the story as session context, every question asked in it.

    Scores intents, the evidence used (context recall/precision/F1) and the answers: strict passes
    (right and within answerMaxChars), median answer length, refused unanswerable questions, false
    refusals and false answers. Exits 0 whatever the score; a missing folder or a bad eval.json exits 2.
    """
    import anyio
    from mrpvm.shells.cli.common import run_with_local_llm
    from mrpvm.shells.evaluation import report_json, run_eval

    def progress(line: str) -> None:  # only on a terminal: piped stderr stays clean
        sys.stderr.write(f"\r\033[K{line}")
        sys.stderr.flush()

    live = sys.stderr is not None and sys.stderr.isatty()

    async def work(environ: dict[str, str] | None):
        return await run_eval(
            list(folders),
            combo,
            matrix=matrix,
            only=only,
            passes=passes,
            environ=environ,
            progress=progress if live else None,
            deliberation_level=deliberation_level,
        )

    report = anyio.run(run_with_local_llm, work, local_llm)
    if live:
        sys.stderr.write("\r\033[K")
    if as_json:
        sys.stdout.write(report_json(report) + "\n")
        sys.stdout.flush()
    else:
        _print_tables(report)


def _mark(ok: bool) -> str:
    return "[green]pass[/]" if ok else "[red]FAIL[/]"


def _answer_mark(q: QuestionResult) -> str:
    """pass / LONG (right but over answerMaxChars) / FAIL, with the error kind when there is one."""
    if q.answerStrictPass:
        return "[green]pass[/]"
    kind = " (false refusal)" if q.falseRefusal else " (false answer)" if q.falseAnswer else ""
    return "[yellow]LONG[/]" if q.answerPass else f"[red]FAIL{kind}[/]"


def _summary(suite: SuiteResult) -> str:
    return (
        f"strict {suite.answerStrictPass}/{suite.total} · answers {suite.answerPass}/{suite.total} · "
        f"context {suite.contextPass}/{suite.total} · intents {suite.intentPass}/{suite.total} · "
        f"avg context F1 {suite.avgContextF1:.2f} · median answer {suite.medianAnswerChars:.0f} chars · "
        f"refused unanswerable {suite.refusedUnanswerable}/{suite.unanswerable} · "
        f"false refusals {suite.falseRefusals} · false answers {suite.falseAnswers} · "
        f"LLM calls {suite.llmCalls} · {suite.secondsPerTurn:.1f} s/turn"
    )


def _print_tables(report: EvalReport) -> None:
    from mrpvm.shells.cli.common import stdout_console
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    console = stdout_console()
    for suite in report.suites:
        pinned = ", ".join(f"{k}={v}" for k, v in suite.pins.items()) or "engine-chosen plugins"
        table = Table(
            title=f"{suite.suiteId} — {suite.title}" if suite.title else suite.suiteId,
            caption=f"{_summary(suite)} · {suite.storyUnits} story units · {pinned} · "
            f"{suite.durationMs / 1000:.2f} s",
            title_justify="left",
            caption_justify="left",
            box=box.SIMPLE_HEAD,
        )
        for column in ("question", "intent", "context", "F1", "answer", "chars", "kb → gs", "answer text"):
            table.add_column(column, overflow="fold")
        for q in suite.questions:
            plugins = f"{q.plugins.get('kb', '-')} → {q.plugins.get('gs', '-')}"
            text = q.error or " ".join(q.answer.split())
            if len(text) > ANSWER_PREVIEW:
                text = text[: ANSWER_PREVIEW - 1] + "…"
            table.add_row(
                q.id,
                _mark(q.intentPass),
                _mark(q.contextPass),
                f"{q.f1:.2f}",
                _answer_mark(q),
                str(q.answerChars),
                escape(plugins),
                escape(text),
            )
        console.print(table)
        for warning in suite.warnings:
            console.print(f"[yellow]warning:[/] {escape(warning)}")
    if report.matrix:
        _print_matrix(report)
    for learning in report.passes:
        strict = sum(r.answerStrictPass for r in learning.suites)
        total = sum(r.total for r in learning.suites)
        false = sum(r.falseAnswers for r in learning.suites)
        calls = sum(r.llmCalls for r in learning.suites)
        console.print(
            f"[bold]pass {learning.number}[/]: strict {strict}/{total} · false answers {false} · "
            f"LLM calls {calls}"
        )


def _print_matrix(report: EvalReport) -> None:
    """One table per suite: a column per run (the engine's choice first), a row per question."""
    from mrpvm.shells.cli.common import stdout_console
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    console = stdout_console()
    for suite in report.suites:
        runs = [suite] + [r for r in report.matrix if r.suiteId == suite.suiteId and r.folder == suite.folder]
        if len(runs) == 1:
            continue
        table = Table(
            title=f"{suite.suiteId} — plugin combos side by side",
            title_justify="left",
            box=box.SIMPLE_HEAD,
        )
        table.add_column("question")
        for run in runs:
            table.add_column(escape(run.combo), overflow="fold")
        for n, q in enumerate(suite.questions):
            table.add_row(
                q.id, *(_answer_mark(r.questions[n]) + f" {r.questions[n].answerChars}" for r in runs)
            )
        console.print(table)
        for run in runs:
            console.print(f"  [bold]{escape(run.combo)}[/]: {_summary(run)}")
