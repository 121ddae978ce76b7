"""The KB lifecycle: removing a source, export and import (a round trip answers the same), deleting a KB,
fork and save from the CLI, strict archive checks, and the DS026 notices the kb-plugins receive."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import anyio
import pytest
from api_support import Daemon
from cli_support import cli_env, mrpvm, one_error_line
from engine_support import Harness
from mrpvm.kernel.errors import ArchiveError
from mrpvm.kernel.store import Store
from mrpvm.knowledge import archive as kb_archive
from mrpvm.knowledge import ops as kb_ops
from mrpvm.protocol.document import KnowledgeUnit

ENABLED = "sd-symbolic,planner-default,kb-fast,kb-balanced,gs-symbolic"
SOURCES = {
    "birds.md": "# Birds\n\nThe zorblax is a teal bird.\n\nThe zorblax lives in Norway.\n",
    "fish.md": "# Fish\n\nThe quibble fish swims in Lake Garda.\n\nThe quibble fish eats green algae.\n",
    "relay.md": "# Relay\n\nThe relay listens on port 8443.\n\nThe relay restarts every night at 03:00.\n",
}
ZIP = {"Content-Type": "application/zip"}
QUESTIONS = {
    "Where does the zorblax live?": "Norway",
    "What does the quibble fish eat?": "algae",
    "Which port does the relay listen on?": "8443",
}


def ask(client, kb: str, question: str) -> dict:
    r = client.post("/chat/completions", json={"message": question, "kb": kb, "stream": False})
    assert r.status_code == 200, r.text
    return r.json()


def group(body: dict) -> dict:
    return body["response_document"]["groups"][0]


def fill(client, kb: str) -> str:
    """A KB named `kb` holding SOURCES (through a workspace session); its id."""
    kb_id = client.post("/kbs", json={"name": kb}).json()["id"]
    session = client.post("/sessions", json={"kb": kb}).json()["session_id"]
    for name, text in SOURCES.items():
        r = client.post(f"/sessions/{session}/workspace/sources", json={"text": text, "source_name": name})
        assert r.status_code == 200, r.text
    return kb_id


@pytest.fixture
def daemon(tmp_path):
    with Daemon(tmp_path / "a", env={"MRPVM_ENABLED_PLUGINS": ENABLED}) as d:
        yield d


def test_removing_a_source_takes_its_answers_while_the_others_still_answer(daemon):
    with daemon.client() as c:
        kb_id = fill(c, "zoo")
        before = ask(c, kb_id, "What does the quibble fish eat?")
        removed = c.delete(f"/kbs/{kb_id}/sources/fish.md")
        after = ask(c, kb_id, "What does the quibble fish eat?")
        still = ask(c, kb_id, "Where does the zorblax live?")
        detail = c.get(f"/kbs/{kb_id}").json()
        again = c.delete(f"/kbs/{kb_id}/sources/fish.md")
        no_kb = c.delete("/kbs/nope/sources/fish.md")
    assert "algae" in group(before)["answerMarkdown"]
    assert removed.status_code == 200, removed.text
    body = removed.json()
    assert body["removed"]["name"] == "fish.md" and body["warnings"] == []
    assert body["kb"]["sources"] == 2
    assert group(after)["status"] == "no-context" and "algae" not in after["answer_markdown"]
    assert "fish.md" not in json.dumps(after["response_document"])
    assert group(still)["status"] == "success" and "Norway" in still["answer_markdown"]
    assert sorted(s["name"] for s in detail["sources"]) == ["birds.md", "relay.md"]
    assert again.status_code == 404 and again.json()["code"] == "SOURCE_NOT_FOUND"
    assert no_kb.status_code == 404 and no_kb.json()["code"] == "KB_NOT_FOUND"
    # every kb-plugin acknowledged the removal: nothing is owed
    with Store.open(daemon.home) as store:
        owed = store._conn().execute("SELECT COUNT(*) FROM source_removals").fetchone()[0]
    assert owed == 0


def test_export_then_import_into_a_fresh_home_answers_the_same(daemon, tmp_path):
    with daemon.client() as c:
        kb_id = fill(c, "zoo")
        answers = {q: ask(c, kb_id, q) for q in QUESTIONS}
        exported = c.get(f"/kbs/{kb_id}/export")
    assert exported.status_code == 200
    assert exported.headers["content-type"] == "application/zip"
    assert 'filename="zoo.mrpvm-kb.zip"' in exported.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(exported.content)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["format"] == "mrpvm-kb" and manifest["formatVersion"] == 1
    assert [s["name"] for s in manifest["sources"]] == list(SOURCES)
    assert all(s["text"] for s in manifest["sources"])  # the raw texts travel too

    with Daemon(tmp_path / "fresh", env={"MRPVM_ENABLED_PLUGINS": ENABLED}) as fresh, fresh.client() as c:
        r = c.post("/kbs/import", content=exported.content, headers={"Content-Type": "application/zip"})
        assert r.status_code == 201, r.text
        imported = r.json()
        assert imported["kb"]["name"] == "zoo" and imported["kb"]["sources"] == 3
        assert all(s["notified"] == ["kb-balanced", "kb-fast"] for s in imported["sources"])
        for question, expected in QUESTIONS.items():
            again = ask(c, "zoo", question)
            assert again["answer_markdown"] == answers[question]["answer_markdown"], question
            assert expected in again["answer_markdown"]
        taken = c.post("/kbs/import", content=exported.content, headers=ZIP)
        renamed = c.post("/kbs/import?name=zoo-2", content=exported.content, headers=ZIP)
        assert (
            ask(c, "zoo-2", "Where does the zorblax live?")["answer_markdown"]
            == answers["Where does the zorblax live?"]["answer_markdown"]
        )
        deleted = c.delete("/kbs/zoo")
        gone = c.get("/kbs/zoo")
    assert taken.status_code == 409 and taken.json()["code"] == "KB_EXISTS"
    assert renamed.status_code == 201 and renamed.json()["kb"]["units"] == imported["kb"]["units"]
    assert deleted.status_code == 200 and deleted.json()["name"] == "zoo"
    assert gone.status_code == 404
    assert not (tmp_path / "fresh" / "artifacts" / imported["kb"]["id"]).exists()


def _archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _edit_manifest(files: dict[str, bytes], change) -> dict[str, bytes]:
    manifest = json.loads(files["manifest.json"])
    change(manifest)
    return {**files, "manifest.json": json.dumps(manifest).encode()}


def test_a_bad_archive_is_refused_whole_with_a_structured_400(daemon):
    with daemon.client() as c:
        kb_id = fill(c, "zoo")
        good = _members(c.get(f"/kbs/{kb_id}/export").content)
        units_member = json.loads(good["manifest.json"])["sources"][0]["units"]
        bad = {
            "not a zip": b"PK\x03\x04 certainly not",
            "no manifest": _archive({k: v for k, v in good.items() if k != "manifest.json"}),
            "future version": _archive(_edit_manifest(good, lambda m: m.update(formatVersion=2))),
            "other format": _archive(_edit_manifest(good, lambda m: m.update(format="zip"))),
            "unknown field": _archive(_edit_manifest(good, lambda m: m.update(extra=1))),
            "tampered units": _archive(
                {**good, units_member: good[units_member].replace(b"zorblax", b"zorblux")}
            ),
            "missing member": _archive({k: v for k, v in good.items() if k != units_member}),
            "repeated name": _archive(
                _edit_manifest(good, lambda m: m["sources"].append(dict(m["sources"][0])))
            ),
        }
        answers = {why: c.post("/kbs/import?name=x", content=data, headers=ZIP) for why, data in bad.items()}
        empty = c.post("/kbs/import", content=b"", headers=ZIP)
        untyped = c.post("/kbs/import?name=y", content=_archive(good))
        kbs = [k["name"] for k in c.get("/kbs").json()["kbs"]]
    for why, r in answers.items():
        assert r.status_code == 400, why
        assert r.json()["code"] == "BAD_ARCHIVE", why
    assert "version 2 is not supported" in answers["future version"].json()["message"]
    assert answers["tampered units"].json()["details"]["member"] == units_member
    assert empty.status_code == 400
    assert untyped.status_code == 415  # an archive is sent as application/zip (shells/api/origin.py)
    assert "x" not in kbs  # nothing was stored for any of them


def test_import_stops_before_storing_when_a_text_does_not_match_its_hash():
    good = {"format": "mrpvm-kb", "formatVersion": 1, "kb": {"name": "k"}, "sources": []}
    units = json.dumps([]).encode()
    import hashlib

    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    source = {
        "id": "s-1",
        "name": "s.md",
        "hash": sha(b"the real text"),
        "units": "units/1.json",
        "unitsSha256": sha(units),
        "text": "texts/1.txt",
        "textSha256": sha(b"another text"),
    }
    data = _archive(
        {
            "manifest.json": json.dumps({**good, "sources": [source]}).encode(),
            "units/1.json": units,
            "texts/1.txt": b"another text",
        }
    )
    with pytest.raises(ArchiveError) as err:
        kb_archive.read_archive(data)
    assert "does not match the source hash" in err.value.message


# --------------------------------------------------------------------------- the CLI


def test_cli_rm_source_export_import_fork_and_session_save(tmp_path):
    home, fresh = tmp_path / "home", tmp_path / "fresh"
    env, env2 = cli_env(home), cli_env(fresh)
    files = []
    for name, text in SOURCES.items():
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    assert mrpvm(env, "ingest", *files, "--kb", "zoo").returncode == 0
    before = json.loads(
        mrpvm(env, "ask", "Which port does the relay listen on?", "--kb", "zoo", "--json").stdout
    )

    rm = mrpvm(env, "kb", "rm-source", "zoo", "relay.md", "--json")
    assert rm.returncode == 0, rm.stderr
    assert json.loads(rm.stdout)["removed"]["name"] == "relay.md"
    after = json.loads(
        mrpvm(env, "ask", "Which port does the relay listen on?", "--kb", "zoo", "--json").stdout
    )
    assert "8443" in before["response_markdown"] and "8443" not in after["response_markdown"]
    missing = mrpvm(env, "kb", "rm-source", "zoo", "relay.md")
    assert missing.returncode == 2 and "SOURCE_NOT_FOUND" in one_error_line(missing)

    archive = tmp_path / "zoo.zip"
    assert mrpvm(env, "kb", "export", "zoo", str(archive)).returncode == 0
    imported = mrpvm(env2, "kb", "import", str(archive), "--kb", "zoo-copy", "--json")
    assert imported.returncode == 0, imported.stderr
    assert [s["name"] for s in json.loads(imported.stdout)["sources"]] == ["birds.md", "fish.md"]
    question = ("ask", "Where does the zorblax live?", "--json")
    original = json.loads(mrpvm(env, *question, "--kb", "zoo").stdout)
    copied = json.loads(mrpvm(env2, *question, "--kb", "zoo-copy").stdout)
    assert (
        copied["response_document"]["groups"][0]["answerMarkdown"]
        == (original["response_document"]["groups"][0]["answerMarkdown"])
    )
    (tmp_path / "junk.zip").write_bytes(b"junk")
    junk = mrpvm(env2, "kb", "import", str(tmp_path / "junk.zip"))
    assert junk.returncode == 2 and "BAD_ARCHIVE" in one_error_line(junk)
    absent = mrpvm(env2, "kb", "import", str(tmp_path / "absent.zip"))
    assert absent.returncode == 2 and "not found" in one_error_line(absent)

    fork = mrpvm(env, "kb", "fork", "zoo", "zoo-fork", "--json")
    assert fork.returncode == 0, fork.stderr
    forked = json.loads(mrpvm(env, *question, "--kb", "zoo-fork").stdout)
    assert "Norway" in forked["response_markdown"]

    (tmp_path / "notes.md").write_text("The wibble is orange.\n")
    with_context = mrpvm(
        env, "ask", "What colour is the wibble?", "--source", str(tmp_path / "notes.md"), "--json"
    )
    session = json.loads(with_context.stdout)["session_id"]
    saved = mrpvm(env, "session", "save", session, "--kb", "notes", "--json")
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["kb"]["name"] == "notes"
    shown = json.loads(mrpvm(env, "kb", "show", "notes", "--json").stdout)
    assert shown["sources"] == 1 and shown["units"] >= 1
    level = mrpvm(env, "session", "set", session, "--deliberation-level", "2")
    assert level.returncode == 0
    assert json.loads(mrpvm(env, "session", "list", "--json").stdout)["sessions"][0]["deliberationLevel"] in (
        0,
        2,
    )


def test_ask_legacy_flags_and_deliberation(tmp_path):
    env = cli_env(tmp_path / "home")
    (tmp_path / "birds.md").write_text(SOURCES["birds.md"])
    assert mrpvm(env, "ingest", str(tmp_path / "birds.md"), "--kb", "zoo").returncode == 0
    out = mrpvm(
        env,
        "ask",
        "Where does the zorblax live?",
        "--kb",
        "zoo",
        "--retrieval-profile",
        "thinkingdb",
        "--processing-mode",
        "symbolic-only",
        "--deliberation-level",
        "1",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["kb_plugin"] == "kb-thinkingdb" and body["retrieval_profile"] == "thinkingdb"
    assert body["processing_mode"] == "symbolic-only" and body["deliberation_level"] == 1
    bad = mrpvm(env, "ask", "hi", "--retrieval-profile", "wide-recall")
    assert bad.returncode == 2 and "allowed: fast, balanced, thinkingdb" in one_error_line(bad)
    level = mrpvm(env, "ask", "hi", "--deliberation-level", "7")
    assert level.returncode == 2


# --------------------------------------------------------------------------- DS026 notices

BIRD = KnowledgeUnit(
    id="b::chunk-000::unit-000",
    sourceId="b",
    chunkId="b::chunk-000",
    kuType="atomic",
    role="Description",
    topic="zorblax",
    claim="The zorblax lives in Norway.",
)
WIBBLE = KnowledgeUnit(
    id="session::t::unit-000",
    sourceId="session",
    chunkId="session::t",
    kuType="atomic",
    role="Description",
    topic="wibble",
    claim="The wibble is orange.",
)


def test_lifecycle_events_reach_every_kb_plugin(tmp_path):
    """session-created, kb-loaded, kb-saved, kb-forked and session-deleted as onSessionEvent; a source
    removal as onSourceText remove (scripted kb-plugins log every request)."""
    ok = {
        "onSessionEvent": {"status": "success"},
        "onSourceText": {"status": "success"},
        "retrieve": {"select": "all"},
    }
    h = Harness(tmp_path, {"kb-a": ok, "kb-b": ok, "kb-c": ok})

    async def go():
        ctx = await h.open()
        try:
            kb = ctx.store.create_kb("docs")
            await kb_ops.store_units(ctx, kb, "birds.md", [BIRD], text=SOURCES["birds.md"])
            session, _ = await kb_ops.create_session(ctx)
            await kb_ops.mount_kb(ctx, session.id, "docs")
            ctx.store.add_session_units(session.id, [WIBBLE])
            await kb_ops.save_session(ctx, session.id, "notes-kb", None)
            copy, _, warnings = await kb_ops.fork_kb(ctx, "docs", "docs-2", session.id)
            await kb_ops.remove_source(ctx, kb, "birds.md")
            await kb_ops.delete_session(ctx, session.id)
            return session.id, kb.id, copy.id, warnings
        finally:
            await ctx.aclose()

    session_id, kb_id, copy_id, warnings = anyio.run(go)
    assert warnings == []
    for plugin in ("kb-a", "kb-b", "kb-c"):
        events = [c["event"] for c in h.calls(plugin, "onSessionEvent")]
        assert events == [
            "session-created",
            "kb-loaded",
            "kb-saved",
            "kb-forked",
            "session-deleted",
        ], plugin
        indexed = [c["prompt"] for c in h.calls(plugin, "onSourceText")]
        assert len(indexed) == 4  # birds.md, the saved session, the fork's copy, then the removal
        assert indexed[-1].startswith("Forget source birds.md of KB docs")
    loaded = next(c for c in h.calls("kb-a", "onSessionEvent") if c["event"] == "kb-loaded")
    assert loaded["artifacts"].endswith(f"/artifacts/{kb_id}/kb-a")
    forked = next(c for c in h.calls("kb-a", "onSessionEvent") if c["event"] == "kb-forked")
    assert forked["artifacts"].endswith(f"/artifacts/{copy_id}/kb-a")
    assert session_id


def test_a_failing_plugin_is_a_warning_not_an_undone_operation(tmp_path):
    script = {"kb-a": {"onSessionEvent": {"fail": {"code": "BOOM", "message": "no"}}}}
    h = Harness(tmp_path, script, enabled=["kb-a", "sd-a", "gs-a", "planner-a"])

    async def go():
        ctx = await h.open()
        try:
            session, warnings = await kb_ops.create_session(ctx)
            return ctx.store.get_session(session.id), warnings
        finally:
            await ctx.aclose()

    session, warnings = anyio.run(go)
    assert session.id and any(
        w.startswith("kb-a answered error to onSessionEvent for session-created") for w in warnings
    )


def test_archive_limits_are_documented_numbers():
    assert kb_archive.FORMAT_VERSION == 1 and kb_archive.MAX_UNPACKED_BYTES >= 1 << 20
    assert Path(kb_archive.__file__).read_text().count("formatVersion") >= 2
