"""The store's turn table (kernel/store.py): a turn is ONE transaction (`commit_turn`), with the test hook
MRPVM_TEST_PAUSE_IN_COMMIT described in kernel/store.py's docstring."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
from mrpvm.protocol.document import KnowledgeUnit, Observation
from mrpvm.protocol.envelope import Pins

from .db.base import Connection
from .errors import (
    SessionNotFound,
    TurnNotFound,
    ValidationFailed,
)
from .records import PlannerOutcome, SessionRecord, TurnRecord, title_from_question
from .store_rows import (
    decode_json,
    insert_session_units,
    json_encoder,
    now_iso,
    pins_json,
)
from .store_sessions import SessionTables

# An untitled session takes its first question as its title; a title set by hand is kept.
_TITLE_IF_UNTITLED = "title = CASE WHEN title = '' THEN ? ELSE title END"
TraceJson = dict[str, Any] | bytes  # a turn's trace: its builtins, or their JSON already encoded
LED_BY_WINDOW = 20  # turns looked back on for the plugins a planner's plans chose (usual_turn_plugins)
CALLED_BY_AT_LEAST = 2  # usually_called_plugins: one turn's calls alone (its own detours) are no usual
PAUSE_IN_COMMIT_S = 300.0  # the test kills the process long before (another turn may run meanwhile)
_PAUSE_IN_COMMIT = os.environ.get("MRPVM_TEST_PAUSE_IN_COMMIT", "")  # test hook, see kernel/store.py


def _pause_in_commit() -> None:
    """MRPVM_TEST_PAUSE_IN_COMMIT (tests only): announce, then hold the open turn transaction."""
    Path(_PAUSE_IN_COMMIT).write_text(str(os.getpid()))
    time.sleep(PAUSE_IN_COMMIT_S)


class TurnTables(SessionTables):
    # ------------------------------------------------------------------ turns

    _TURN_COLS = (
        "request_id, session_id, turn_index, user_message, response_markdown, response_document, trace,"
        " status, plugin_ids, llm_calls, duration_ms, created_at, answer_truncated"
    )

    _INSERT_TURN = f"INSERT INTO turns ({_TURN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    @staticmethod
    def _turn(row: tuple) -> TurnRecord:
        return TurnRecord(
            requestId=row[0],
            sessionId=row[1],
            turnIndex=row[2],
            userMessage=row[3],
            responseMarkdown=row[4],
            responseDocument=decode_json(row[5]),
            trace=decode_json(row[6]),
            status=row[7],
            pluginIds=decode_json(row[8]),
            llmCalls=row[9],
            durationMs=row[10],
            createdAt=row[11],
            answerTruncated=bool(row[12]),
        )

    def commit_turn(
        self,
        turn: TurnRecord,
        units: list[KnowledgeUnit],
        preferences: Pins | None = None,
        *,
        session: SessionRecord | None = None,
        planner_outcomes: Iterable[PlannerOutcome] = (),
        alpha: float = 0.3,
        trace_json: bytes | None = None,
    ) -> TurnRecord:
        """ONE transaction: store `session` if given and new (a `draft_session()` record), promote the
        staged turn units (deduplicated), append the turn with its response document and trace, bump the
        session's turn count, update its preferences if given, and fold `planner_outcomes` into the
        planner-level EWMA (as `record_planner_outcome`). `trace_json`: the trace already encoded (the
        engine's, straight from its structs), stored instead of `turn.trace`'s JSON (the returned record
        keeps `turn.trace` as given).

        The turn index is the session's turn count (the store's, not the caller's). Returns the stored turn.
        """
        stamp = now_iso()
        outcomes = list(planner_outcomes)
        if outcomes and not 0.0 < alpha <= 1.0:
            raise ValidationFailed(f"alpha must be in (0, 1], got {alpha}")
        if session is not None and session.id != turn.sessionId:
            raise ValidationFailed(
                f"turn {turn.requestId} belongs to session {turn.sessionId}, not {session.id}",
                {"request": turn.requestId, "session": session.id},
            )
        created_at = turn.createdAt or stamp
        first_title = title_from_question(turn.userMessage)  # names an untitled session
        turn_row = [
            turn.requestId,
            turn.sessionId,
            0,  # the turn index, set below from the session's turn count
            turn.userMessage,
            turn.responseMarkdown,
            json_encoder.encode(turn.responseDocument),
            json_encoder.encode(turn.trace) if trace_json is None else trace_json,
            turn.status,
            json_encoder.encode(turn.pluginIds),
            turn.llmCalls,
            turn.durationMs,
            created_at,
            int(turn.answerTruncated),
        ]
        try:
            with self.transaction() as conn:
                # A drafted session is inserted already holding this turn (turn_count 1, its preferences).
                created = (
                    session is not None
                    and conn.execute(
                        self._INSERT_SESSION + " ON CONFLICT(id) DO NOTHING",
                        (
                            session.id,
                            session.kbId,
                            pins_json(session.preferences if preferences is None else preferences),
                            session.createdAt,
                            stamp,
                            1,
                            session.deliberationLevel,
                            session.title or title_from_question(turn.userMessage),
                        ),
                    ).rowcount
                    == 1
                )
                if not created:  # one statement bumps the count and returns the turn's index
                    if preferences is not None:
                        rows = conn.execute(
                            "UPDATE sessions SET preferences = ?, turn_count = turn_count + 1, updated_at = ?,"
                            f" {_TITLE_IF_UNTITLED} WHERE id = ? RETURNING turn_count - 1",
                            (pins_json(preferences), stamp, first_title, turn.sessionId),
                        ).fetchall()
                    else:
                        rows = conn.execute(
                            "UPDATE sessions SET turn_count = turn_count + 1, updated_at = ?,"
                            f" {_TITLE_IF_UNTITLED} WHERE id = ? RETURNING turn_count - 1",
                            (stamp, first_title, turn.sessionId),
                        ).fetchall()  # fetchall: the statement runs to its end before the next one
                    if not rows:
                        raise SessionNotFound(f"no session '{turn.sessionId}'", {"session": turn.sessionId})
                    turn_row[2] = rows[0][0]
                insert_session_units(conn, turn.sessionId, units, empty=created)
                conn.execute(self._INSERT_TURN, turn_row)
                for outcome in outcomes:
                    self._apply_planner_outcome(conn, outcome, alpha, stamp)
                if _PAUSE_IN_COMMIT:
                    _pause_in_commit()
        except self.integrity_errors as err:
            raise ValidationFailed(
                f"turn {turn.requestId} cannot be committed: {err}", {"request": turn.requestId}
            ) from None
        return msgspec.structs.replace(turn, turnIndex=turn_row[2], createdAt=created_at)

    def update_turn_trace(self, request_id: str, trace: TraceJson) -> None:
        """Replace a committed turn's trace (a call the turn left running has ended: see
        `overlap.Background`); one transaction. TurnNotFound when no such turn is stored. `trace`: the
        trace's builtins, or their JSON already encoded (`TraceRecorder.to_json`)."""
        if not self._set_trace(self._conn(), request_id, trace):  # one statement: its own transaction
            raise TurnNotFound(f"no turn with request id '{request_id}'", {"request": request_id})

    @staticmethod
    def _set_trace(conn: Connection, request_id: str, trace: TraceJson) -> bool:
        sql = "UPDATE turns SET trace = ? WHERE request_id = ?"
        data = trace if isinstance(trace, bytes) else json_encoder.encode(trace)
        return conn.execute(sql, (data, request_id)).rowcount > 0

    def record_outcome_and_trace(
        self,
        planner_id: str,
        kb_id: str | None,
        observations: list[Observation],
        request_id: str,
        trace_of: Callable[[int], TraceJson],
    ) -> int:
        """`record_observations`, then the committed turn's trace replaced by `trace_of(how many were
        folded)`, in one transaction (a deferred recordOutcome that ended after its turn was committed:
        kernel/engine/outcome.py). A turn no longer stored (its session deleted meanwhile) keeps the fold."""
        with self.transaction() as conn:
            stored = self._fold(conn, planner_id, kb_id, observations)
            self._set_trace(conn, request_id, trace_of(stored))
        return stored

    def record_outcomes_and_traces(
        self,
        planner_id: str,
        kb_id: str | None,
        batch: list[tuple[list[Observation], str, Callable[[int], TraceJson] | None]],
    ) -> list[int]:
        """A batch of one KB's outcomes (kernel/engine/outcome_batch.py) in one transaction: every
        (observations, request_id, trace_of) folded in one key order with the others (`_fold_many`: the
        lock order of a single fold), then, for each with `trace_of`, its committed turn's trace replaced
        as in `record_outcome_and_trace`, in request id order. Any error rolls the whole batch back.
        Returns how many observations of each were folded."""
        with self.transaction() as conn:
            stored = self._fold_many(conn, planner_id, kb_id, [observations for observations, _, _ in batch])
            for (_, request_id, trace_of), count in sorted(
                zip(batch, stored, strict=True), key=lambda p: p[0][1]
            ):
                if trace_of is not None:
                    self._set_trace(conn, request_id, trace_of(count))
        return stored

    def get_turn(self, request_id: str) -> TurnRecord:
        row = (
            self._conn()
            .execute(f"SELECT {self._TURN_COLS} FROM turns WHERE request_id = ?", (request_id,))
            .fetchone()
        )
        if row is None:
            raise TurnNotFound(f"no turn with request id '{request_id}'", {"request": request_id})
        return self._turn(row)

    def list_turns(
        self, session_id: str, *, start: int | None = None, limit: int | None = None, descending: bool = False
    ) -> list[TurnRecord]:
        """The session's turns with their decoded document and trace (for display; see
        `recent_user_messages` for the history a turn needs), in turn order (`descending`: newest first),
        from turn index `start` on (down, when descending), at most `limit`."""
        self.get_session(session_id)
        order, bound = ("DESC", "<=") if descending else ("ASC", ">=")
        where = f" AND turn_index {bound} ?" if start is not None else ""
        params: tuple[Any, ...] = (session_id,) + ((start,) if start is not None else ())
        rows = self._conn().execute(
            f"SELECT {self._TURN_COLS} FROM turns WHERE session_id = ?{where} ORDER BY turn_index {order}"
            + ("" if limit is None else f" LIMIT {max(0, int(limit))}"),
            params,
        )
        return [self._turn(r) for r in rows]

    def usual_turn_plugins(self, led_by: str | None = None) -> dict[str, str]:
        """Stage -> the plugin id most of the home's last LED_BY_WINDOW turns used (of those `led_by` led, when
        it led any; ties: the one used more recently), {} when there is no turn: what a one-turn process
        expects its turn to call (kernel/engine/warm_start.py). A turn's kb-plugin is the one whose view
        answered; after a weak first view that is the fallback's, so the latest turn alone guesses the kb-plugin
        the next plan puts first less often than the window's usual one does (bench/ISSUE22_FIGURES.md,
        session 32 perf57)."""
        rows = self._conn().execute(
            "SELECT plugin_ids FROM turns ORDER BY created_at DESC LIMIT ?", (LED_BY_WINDOW,)
        )
        recent = [_plugin_ids(r[0]) for r in rows]  # the latest first
        led = [p for p in recent if p.get("planner") == led_by] if led_by is not None else recent
        return _usual(led or recent[:1])

    def usually_called_plugins(self, led_by: str | None = None) -> list[str]:
        """The plugin ids that at least two thirds of the home's last LED_BY_WINDOW turns called (of those
        `led_by` led; [] when it led none), and at least CALLED_BY_AT_LEAST of them, the most called first
        (ties: the latest turn's order), read from the turns' traces (their plugin nodes are the calls made).
        Two thirds, not a bare majority: a worker started for nothing costs CPU on a busy machine, and a
        window's rate foretells the next question only roughly (bench/ISSUE22_FIGURES.md, perf62). Beside
        `usual_turn_plugins`' one plugin per stage, this names a second plugin of a stage that most turns
        needed: e.g. the fallback kb-plugin of a home whose first kb views are mostly weak, which a one-turn
        process then starts beside the first instead of after its view failed (kernel/engine/warm_start.py)."""
        rows = self._conn().execute(
            "SELECT plugin_ids, trace FROM turns ORDER BY created_at DESC LIMIT ?", (LED_BY_WINDOW,)
        )
        led = [r[1] for r in rows if led_by is None or _plugin_ids(r[0]).get("planner") == led_by]
        counts: dict[str, int] = {}  # insertion order: the latest turn's calls first
        for trace in led:
            for plugin_id in _called(trace):
                counts[plugin_id] = counts.get(plugin_id, 0) + 1
        ranked = sorted(counts, key=lambda p: -counts[p])  # stable: ties keep the latest turn's order
        return [p for p in ranked if 3 * counts[p] >= 2 * len(led) and counts[p] >= CALLED_BY_AT_LEAST]

    def recent_user_messages(self, session_id: str, limit: int) -> list[str]:
        """The user messages of the session's last `limit` turns, oldest first; no trace is read."""
        rows = (
            self._conn()
            .execute(
                "SELECT user_message FROM turns WHERE session_id = ? ORDER BY turn_index DESC LIMIT ?",
                (session_id, max(0, limit)),
            )
            .fetchall()
        )
        if not rows:
            self.get_session(session_id)  # SessionNotFound for an unknown session
        return [r[0] for r in reversed(rows)]


def _usual(turns: list[dict[str, str]]) -> dict[str, str]:
    """Per stage, the plugin id most of `turns` (the latest first) name; ties go to the latest."""
    counts: dict[str, dict[str, int]] = {}
    for plugins in turns:
        for stage, plugin_id in plugins.items():
            stage_counts = counts.setdefault(stage, {})
            stage_counts[plugin_id] = stage_counts.get(plugin_id, 0) + 1
    # dicts keep insertion order: the first plugin id met per stage is the latest turn's, so max keeps it on a tie
    return {stage: max(found, key=found.__getitem__) for stage, found in counts.items()}


class _CallNode(msgspec.Struct):
    """What `_called` reads of a trace node (the rest of it is skipped by the decoder)."""

    kind: str = ""
    pluginId: str | None = None


class _TraceCalls(msgspec.Struct):
    nodes: list[_CallNode] = []


_trace_calls = msgspec.json.Decoder(_TraceCalls)


def _called(trace: bytes | str | None) -> list[str]:
    """The plugin ids a stored trace names in its plugin nodes (one per call made), each once, in the order
    of their first calls; none when it does not read as a trace."""
    if not trace:
        return []
    try:
        nodes = _trace_calls.decode(trace).nodes
    except (msgspec.DecodeError, TypeError):
        return []
    return list(dict.fromkeys(n.pluginId for n in nodes if n.kind == "plugin" and n.pluginId))


def _plugin_ids(text: bytes | str | None) -> dict[str, str]:
    """A turn's `plugin_ids` column (stage -> plugin id); {} when it is not such a mapping."""
    plugins = decode_json(text)
    return {k: v for k, v in plugins.items() if isinstance(v, str)} if isinstance(plugins, dict) else {}
