"""Ingest through real plugin processes: chunking, tree merge, atomic replacement, notification, errors.

The scripted plugins live in tests/support/ingest_plugins (test-sd: 8 KB input ceiling, so sources are chunked;
test-kb records every notification in its artifacts folder; test-kb-fail always fails).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import anyio
import msgspec
import pytest
from mrpvm.kernel.errors import IngestError, SessionNotFound, UnknownPluginError
from mrpvm.kernel.store_rows import text_hash
from mrpvm.knowledge import ingest as ingest_module
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source, load_session_context
from mrpvm.protocol.envelope import encode_request

PLUGINS = Path(__file__).resolve().parents[1] / "support" / "ingest_plugins"
ENABLED = "test-sd,test-sd-big,test-kb,test-kb-fail"


def run_kernel(
    home: Path,
    work,
    enabled: str = ENABLED,
    manifests: Path = PLUGINS,
    plugin_env: dict[str, str] | None = None,
    writable: Path | None = None,
):
    """Open a kernel context on `home` with the test plugins, run `await work(ctx)`, close it.
    `writable`: a folder the (sandboxed) plugins may write, e.g. for their logs."""

    async def main():
        env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS=enabled)
        if writable is not None:
            writable.mkdir(parents=True, exist_ok=True)
            env["MRPVM_SANDBOX_WRITE_PATHS"] = str(writable)
        ctx = await open_context(env, manifests_dir=manifests, extra_env=plugin_env)
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()

    return anyio.run(main)


def prose(paragraphs: int, tag: str, sentences: int = 5) -> str:
    """Deterministic paragraphs of numbered sentences; every sentence is unique and carries `tag`."""
    out = []
    for p in range(paragraphs):
        out.append(
            " ".join(
                f"Paragraph {p} sentence {s} of the {tag} text states fact number {p * 100 + s}."
                for s in range(sentences)
            )
        )
    return "\n\n".join(out) + "\n"


def sentences_of(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]


def calls(home: Path, kb_id: str, plugin: str = "test-kb") -> list[dict]:
    path = home / "artifacts" / kb_id / plugin / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_chunked_source_becomes_one_tree(tmp_path):
    text = prose(120, "alpha")  # ~60 KB through an 8 KB ceiling

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        seen, phases = [], []
        result = await ingest_source(
            ctx,
            kb,
            "alpha.md",
            text,
            sd_plugin="test-sd",
            progress=lambda d, t: seen.append((d, t)),
            on_phase=lambda p: phases.append((p, len(calls(tmp_path, kb.id)))),
        )
        return kb, result, ctx.store.kb_units(kb.id), seen, phases

    kb, result, units, seen, phases = run_kernel(tmp_path, work)
    assert result.chunks >= 6 and result.unitCount == len(units) and not result.unchanged
    assert seen[-1][0] == seen[-1][1] == len(text.encode())
    # after the bytes, the indexing step is named (with its unit count) before the kb-plugin is called
    assert phases == [(f"indexing {len(units):,} units (test-kb, test-kb-fail)", 0)]
    ids = [u.id for u in units]
    assert len(ids) == len(set(ids))
    by_id = {u.id: u for u in units}
    roots = [u for u in units if u.kuType == "aggregate"]
    assert [r.id for r in roots] == [f"{result.id}::source-summary"]
    sections = [u for u in units if u.kuType == "composite"]
    assert roots[0].childUnitIds == [s.id for s in sections] and len(sections) == 120
    for u in units:  # parent and child links agree both ways and stay inside the tree
        for child in u.childUnitIds:
            assert u.id in by_id[child].parentUnitIds
        for parent in u.parentUnitIds:
            assert u.id in by_id[parent].childUnitIds
        assert u.sourceId == result.id
    atomics = [u for u in units if u.kuType == "atomic"]
    for u in atomics:  # offsets refer to the whole source, whichever chunk the unit came from
        assert text[u.charStart : u.charEnd] == u.claim
    assert sorted(u.claim for u in atomics) == sorted(sentences_of(text))
    assert {u.chunkIndex for u in atomics} == set(range(result.chunks))
    # kb-plugins: the good one indexed the whole tree in its own folder, the failing one is a warning
    assert result.notified == ["test-kb"]
    assert calls(tmp_path, kb.id) == [
        {
            "op": "onSourceText",
            "units": len(units),
            "sessionId": "",
            "kbId": kb.id,
            "sourceId": result.id,
            "action": "upsert",
            "textBytes": len(text.encode()),
        }
    ]
    assert any(w.startswith("test-kb-fail") for w in result.warnings)


def test_every_chunk_request_carries_the_source_fields(tmp_path):
    """KB ingest and session loads send the same per-chunk payload: the source's fields, the chunk's own
    text, index and offset, and the scope (test-sd logs every payload it receives)."""
    kb_text, session_text = prose(40, "kbsource"), prose(20, "sessionsource")
    log = tmp_path / "logs" / "sd-calls.jsonl"

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        session = ctx.store.create_session(kb.id)
        result = await ingest_source(
            ctx,
            kb,
            "guide.md",
            kb_text,
            sd_plugin="test-sd",
            source_type="markdown",
            author="Ada",
            knowledge_date="2024-05-01",
        )
        loaded = await load_session_context(
            ctx, session.id, session_text, "notes.md", sd_plugin="test-sd", source_type="chat"
        )
        return result, session, loaded

    result, session, loaded = run_kernel(
        tmp_path / "home", work, plugin_env={"MRPVM_TEST_SD_LOG": str(log)}, writable=log.parent
    )
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    by_scope = {
        scope: sorted((e for e in entries if e["scope"] == scope), key=lambda e: e["chunkIndex"])
        for scope in ("kb", "session")
    }
    assert len(entries) == len(by_scope["kb"]) + len(by_scope["session"])
    for scope, text, source_id, name, kind, session_id in (
        ("kb", kb_text, result.id, "guide.md", "markdown", ""),
        ("session", session_text, loaded.source_id, "notes.md", "chat", session.id),
    ):
        chunks = by_scope[scope]
        assert len(chunks) >= 2  # 8 KB ceiling: the text is chunked
        assert [e["chunkIndex"] for e in chunks] == list(range(len(chunks)))
        offset = 0
        for e in chunks:  # the chunks tile the text in order
            assert e["charOffset"] == offset
            offset += e["textLength"]
            assert (e["sourceId"], e["sourceName"], e["sourceType"], e["sessionId"]) == (
                source_id,
                name,
                kind,
                session_id,
            )
            expected = ("Ada", "2024-05-01") if scope == "kb" else (None, None)
            assert (e["author"], e["knowledgeDate"]) == expected
        assert offset == len(text)
    assert result.chunks == len(by_scope["kb"])


def test_reingest_replaces_atomically_and_same_hash_is_a_noop(tmp_path):
    v1, v2 = prose(30, "first"), prose(25, "second")

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        r1 = await ingest_source(ctx, kb, "doc.md", v1, sd_plugin="test-sd")
        same = await ingest_source(ctx, kb, "doc.md", v1, sd_plugin="test-sd")
        calls_after_same = len(calls(tmp_path, kb.id))
        r2 = await ingest_source(ctx, kb, "doc.md", v2, sd_plugin="test-sd")
        return kb, r1, same, calls_after_same, r2, ctx.store.kb_units(kb.id), ctx.store.list_sources(kb.id)

    kb, r1, same, calls_after_same, r2, units, sources = run_kernel(tmp_path, work)
    assert same.unchanged and same.id == r1.id and same.unitCount == r1.unitCount and calls_after_same == 1
    assert r2.id == r1.id and r2.hash == text_hash(v2) != r1.hash
    assert len(sources) == 1 and sources[0].unitCount == len(units) == r2.unitCount
    claims = [u.claim for u in units if u.kuType == "atomic"]
    assert sorted(claims) == sorted(sentences_of(v2)) and not any("first" in c for c in claims)
    recorded = calls(tmp_path, kb.id)
    assert [(c["sourceId"], c["action"]) for c in recorded] == [(r1.id, "upsert"), (r1.id, "upsert")]


def test_a_failing_chunk_stores_nothing_and_keeps_the_previous_version(tmp_path):
    v1 = prose(30, "first")
    v2 = prose(30, "second") + "\n\nA late paragraph fails. @@ERROR@@\n"

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        r1 = await ingest_source(ctx, kb, "doc.md", v1, sd_plugin="test-sd")
        with pytest.raises(IngestError) as info:
            await ingest_source(ctx, kb, "doc.md", v2, sd_plugin="test-sd")
        return kb, r1, info.value, ctx.store.get_source(kb.id, "doc.md"), ctx.store.kb_units(kb.id)

    kb, r1, err, source, units = run_kernel(tmp_path, work)
    assert err.code == "INGEST_FAILED" and "SCRIPTED_ERROR" in err.message and "test-sd" in err.message
    assert source.hash == r1.hash and len(units) == r1.unitCount
    assert all("first" in u.claim for u in units if u.kuType == "atomic")
    assert len(calls(tmp_path, kb.id)) == 1  # the kb-plugins heard only of the committed version


def test_unsupported_empty_and_unknown_plugins_are_clear_errors(tmp_path):
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        errors = []
        for text, sd in [
            ("Some text. @@UNSUPPORTED@@", "test-sd"),
            ("  \n\n ", "test-sd"),
            ("Text.", "no-such-sd"),
        ]:
            with pytest.raises((IngestError, UnknownPluginError)) as info:
                await ingest_source(ctx, kb, "x.md", text, sd_plugin=sd)
            errors.append(info.value)
        with pytest.raises(UnknownPluginError):
            await ingest_source(ctx, kb, "x.md", "Text.", sd_plugin="test-kb")  # not an sd-plugin
        return errors, ctx.store.kb_stats(kb.id)

    (unsupported, empty, unknown), stats = run_kernel(tmp_path, work)
    assert unsupported.code == "INGEST_FAILED" and "unsupported" in unsupported.message
    assert empty.code == "INGEST_FAILED" and "empty" in empty.message
    assert unknown.code == "UNKNOWN_PLUGIN" and unknown.status == 404
    assert stats == {"sources": 0, "units": 0}


def test_session_context_load_uses_the_same_path_and_deduplicates(tmp_path):
    text = prose(12, "session")

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        session = ctx.store.create_session(kb.id)
        for running in ("test-kb", "test-kb-fail"):  # told at once (else held: test_session_notices_held)
            await ctx.supervisor.warm(running)
        first = await load_session_context(ctx, session.id, text, "notes.md", sd_plugin="test-sd")
        again = await load_session_context(ctx, session.id, text, "notes.md", sd_plugin="test-sd")
        with pytest.raises(SessionNotFound):
            await load_session_context(ctx, "ses_missing", text, "notes.md", sd_plugin="test-sd")
        return kb, session, first, again, ctx.store.session_units(session.id)

    kb, session, first, again, stored = run_kernel(tmp_path, work)
    assert len(first) == len(stored) > 60 and [u.id for u in first] == [u.id for u in stored]
    assert list(again) == []  # every unit already in the session
    assert sorted(u.claim for u in stored if u.kuType == "atomic") == sorted(sentences_of(text))
    recorded = calls(tmp_path, kb.id)
    assert recorded == [
        {
            "op": "onSessionEvent",
            "units": len(first),
            "sessionId": session.id,
            "event": "session-kus-committed",
            "scope": "session",
        }
    ]
    assert any(w.startswith("test-kb-fail") for w in first.warnings)


@pytest.mark.parametrize("late", [False, True])
def test_an_ingest_into_a_new_kb_starts_each_kb_worker_once(tmp_path, monkeypatch, late):
    """The kb-plugins' workers started for an ingest (beside its sd stage, or after it for a large source)
    bind the new KB's artifacts folder, so its notification is served by them (not by fresh workers
    started after retiring them)."""
    if late:
        monkeypatch.setattr(ingest_module, "LATE_KB_START_BYTES", 1)

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "a.md", prose(4, "spawn"), sd_plugin="test-sd")
        return result, ctx.supervisor.health()

    result, health = run_kernel(tmp_path, work, enabled="test-sd,test-kb")
    assert result.notified == ["test-kb"]
    assert health["test-kb"]["calls"] == 1 and health["test-kb"]["spawns"] == 1


@pytest.mark.parametrize("late", [False, True])
def test_a_large_sources_kb_workers_start_when_its_reply_arrives_before_its_parse(
    tmp_path, monkeypatch, late
):
    """A large source's kb workers start once the sd-plugin's reply has arrived, before the kernel parses
    it (beside the parse of a large tree, not after it); a small source's start before its sd call."""
    from mrpvm.kernel.supervisor import reply_read as core

    if late:
        monkeypatch.setattr(ingest_module, "LATE_KB_START_BYTES", 1)
    events: list[str] = []
    parse = core.parse_document

    def parsing(text, op=None, *args, **kwargs):
        events.append(f"parse {op}")
        return parse(text, op, *args, **kwargs)

    monkeypatch.setattr(core, "parse_document", parsing)

    async def work(ctx):
        warm = ctx.supervisor.warm

        async def warming(plugin_id, *args, **kwargs):
            events.append(f"warm {plugin_id}")
            return await warm(plugin_id, *args, **kwargs)

        call = ctx.supervisor.call

        async def calling(plugin_id, request, **kwargs):
            events.append(f"call {plugin_id}")
            return await call(plugin_id, request, **kwargs)

        ctx.supervisor.warm, ctx.supervisor.call = warming, calling
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "a.md", prose(4, "reply"), sd_plugin="test-sd")
        return result, ctx.supervisor.health()

    result, health = run_kernel(tmp_path, work, enabled="test-sd,test-kb")
    assert result.notified == ["test-kb"] and health["test-kb"]["spawns"] == 1
    sd_call, kb_warm = events.index("call test-sd"), events.index("warm test-kb")
    assert events.index("warm test-sd") < sd_call
    assert (
        (sd_call < kb_warm < events.index("parse normalizePersistentContext")) if late else kb_warm < sd_call
    )


def test_a_kb_worker_that_cannot_start_early_leaves_the_sd_reply_and_the_ingest_whole(tmp_path, monkeypatch):
    """The kb workers' early start runs inside the sd call (as its reply arrives): a start that fails there (a
    spawn's OSError) is advisory, so the sd-plugin's reply is kept and the kb call starts its own worker."""
    monkeypatch.setattr(ingest_module, "LATE_KB_START_BYTES", 1)

    async def work(ctx):
        warm = ctx.supervisor.warm

        async def warming(plugin_id, *args, **kwargs):
            if plugin_id == "test-kb":
                raise OSError(28, "No space left on device")
            return await warm(plugin_id, *args, **kwargs)

        ctx.supervisor.warm = warming
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "a.md", prose(4, "advisory"), sd_plugin="test-sd")
        return result, ctx.supervisor.health()

    result, health = run_kernel(tmp_path, work, enabled="test-sd,test-kb")
    assert result.notified == ["test-kb"]
    assert health["test-sd"]["ok"] >= 1 and health["test-kb"]["calls"] == 1


def test_an_sd_worker_started_when_the_context_opens_serves_the_ingest(tmp_path):
    """`mrpvm ingest` starts the sd-plugin's worker from the context's `opened` hook: the ingest's sd stage
    uses it: no second worker is started for its call."""

    async def main():
        env = dict(os.environ, MRPVM_HOME=str(tmp_path), MRPVM_ENABLED_PLUGINS="test-sd,test-kb")
        started: list[bool] = []
        ctx = await open_context(
            env, manifests_dir=PLUGINS, opened=lambda c: started.append(c.supervisor.prestart("test-sd"))
        )
        try:
            kb = ctx.store.create_kb("docs")
            result = await ingest_source(ctx, kb, "a.md", prose(4, "early"), sd_plugin="test-sd")
            return started, result, ctx.supervisor.health()
        finally:
            await ctx.aclose()

    started, result, health = anyio.run(main)
    assert started == [True]
    assert result.chunks == 1 and result.notified == ["test-kb"]
    assert health["test-sd"]["spawns"] == 1 and health["test-sd"]["calls"] == 1


def _ingest_recording(home: Path, sd: str, text: str):
    """Ingest `text` with `sd` while recording each normalize request's wire bytes and each reply's CNL text:
    (result or IngestError, the stored units with the source id written SRC, requests, CNL texts, stats)."""

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        sent: list[bytes] = []
        texts: list[str] = []
        call = ctx.supervisor.call

        async def recording(plugin_id, request, **kw):
            result = await call(plugin_id, request, **kw)
            if request.op == "normalizePersistentContext":
                sent.append(encode_request(request))
                texts.append(result.cnl)
            return result

        ctx.supervisor.call = recording
        try:
            outcome = await ingest_source(ctx, kb, "guide.md", text, sd_plugin=sd)
        except IngestError as err:
            outcome = err
        units = [
            msgspec.json.encode(u).decode().replace(outcome.id, "SRC")
            if not isinstance(outcome, IngestError)
            else ""
            for u in ctx.store.kb_units(kb.id)
        ]
        return outcome, units, sent, texts, ctx.store.kb_stats(kb.id)

    return run_kernel(home, work, enabled=f"{sd},test-kb")


def test_a_compact_sd_reply_stores_the_tree_its_cnl_reply_stores(tmp_path):
    """protocol/SPEC.md, Compact reply: the same scripted sd-plugin, once keeping CNL (test-sd) and once
    declaring `replyForm: msgpack` (test-sd-compact), chunked: the compact one is asked for it and answers
    it (no CNL text reaches the kernel), the CNL one never sees the field on the wire, and both store the
    same merged tree."""
    text = prose(40, "compact")
    cnl, cnl_units, cnl_sent, cnl_texts, _ = _ingest_recording(tmp_path / "cnl", "test-sd", text)
    compact, compact_units, compact_sent, compact_texts, _ = _ingest_recording(
        tmp_path / "compact", "test-sd-compact", text
    )
    assert cnl.chunks == compact.chunks >= 2 and cnl.unitCount == compact.unitCount > 100
    assert compact_units == cnl_units
    assert all(b"replyForm" not in body for body in cnl_sent) and len(cnl_sent) == cnl.chunks
    assert all(t.startswith("## Plugin Result") for t in cnl_texts)
    assert all(json.loads(body)["payload"]["replyForm"] == "msgpack" for body in compact_sent)
    assert compact_texts == [""] * compact.chunks  # every reply was the MessagePack form


@pytest.mark.parametrize("sd", ["test-sd", "test-sd-compact"])
def test_a_broken_tree_fails_the_ingest_in_either_form_and_stores_nothing(tmp_path, sd):
    """A unit with both a Claim and a Procedure breaks a CNL rule: refused in CNL and in the compact form
    alike (INVALID_CNL), the ingest fails and nothing is stored."""
    outcome, _, _, _, stats = _ingest_recording(tmp_path, sd, prose(3, "broken") + "\n\n@@BOTH@@ here.")
    assert isinstance(outcome, IngestError)
    assert "INVALID_CNL" in outcome.message and "claim-or-procedure" in outcome.message
    assert stats == {"sources": 0, "units": 0}
