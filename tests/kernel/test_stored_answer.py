"""The stored-answer cap (kernel/engine/stored_answer.py) and explainability paging, through a real daemon."""

from __future__ import annotations

import pytest
from api_support import FACTS, Daemon
from hypothesis import given
from hypothesis import strategies as st
from mrpvm.kernel.engine.stored_answer import MARKER, cap_answer, cut

NO_CONTEXT = "The session context and persistent KB do not contain enough evidence to answer this intent."


def test_cut_keeps_whole_characters_and_says_what_it_kept():
    text = "é" * 100  # 200 bytes
    kept, was_cut = cut(text, 51)
    assert was_cut and kept.startswith("é" * 25) and not kept.startswith("é" * 26)
    assert kept.endswith(MARKER.format(kept=50, total=200))
    assert cut(text, 200) == (text, False) and cut("", 1) == ("", False)


@given(st.text(max_size=300), st.integers(min_value=1, max_value=400))
def test_cut_never_exceeds_the_limit_before_its_marker(text, limit):
    kept, was_cut = cut(text, limit)
    size = len(text.encode("utf-8", "surrogatepass"))
    assert was_cut == (size > limit)
    if was_cut:
        body = kept[: kept.rindex("\n\n[answer truncated")]
        assert len(body.encode("utf-8", "surrogatepass")) <= limit and text.startswith(body)
    else:
        assert kept == text


def test_cap_answer_cuts_markdown_and_every_group_answer_and_leaves_the_input_alone():
    big = "word " * 1000
    document = {
        "requestId": "r",
        "groups": [
            {"answerMarkdown": big, "subgroups": [{"answerMarkdown": big, "subgroups": []}]},
            {"answerMarkdown": "short", "subgroups": []},
        ],
    }
    markdown, stored, truncated = cap_answer(big, document, 100)
    assert (
        truncated and markdown.startswith("word ") and "[answer truncated in storage: 100 of 5000" in markdown
    )
    assert stored["storedAnswerTruncated"] == {"limitBytes": 100, "textsCut": 3}
    assert stored["groups"][1]["answerMarkdown"] == "short"
    assert "truncated" in stored["groups"][0]["subgroups"][0]["answerMarkdown"]
    assert document["groups"][0]["answerMarkdown"] == big and "storedAnswerTruncated" not in document
    assert cap_answer("small", {"groups": []}, 100) == ("small", {"groups": []}, False)


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    with Daemon(tmp_path_factory.mktemp("home"), env={"MRPVM_MAX_STORED_ANSWER_BYTES": "40"}) as d:
        yield d


def test_a_large_answer_reaches_the_client_whole_and_is_stored_cut(capped):
    with capped.client() as http:
        reply = http.post("/chat/completions", json={"message": "What is a glorp?", "stream": False}).json()
        assert NO_CONTEXT in reply["response_markdown"]  # the client gets all of it
        (turn,) = http.get(f"/sessions/{reply['session_id']}/explainability").json()["turns"]
        assert turn["answer_truncated"] is True
        stored = turn["response_document"]
        assert stored["storedAnswerTruncated"]["limitBytes"] == 40
        answer = stored["groups"][0]["answerMarkdown"]
        assert answer.startswith(NO_CONTEXT[:40]) and NO_CONTEXT not in answer
        assert f"40 of {len(NO_CONTEXT)} bytes kept" in answer


def test_explainability_pages_with_limit_and_cursor(capped):
    with capped.client() as http:
        session = http.post("/sessions", json={}).json()["session_id"]
        http.post(f"/sessions/{session}/context", json={"text": FACTS}).raise_for_status()
        asked = [f"Where does the zorblax live? ({n})" for n in range(5)]
        for message in asked:
            body = {"message": message, "session_id": session, "stream": False}
            assert http.post("/chat/completions", json=body).status_code == 200

        def pages(**query) -> list[list[str]]:
            out, cursor = [], None
            while True:
                params = {**query, **({"cursor": cursor} if cursor else {})}
                page = http.get(f"/sessions/{session}/explainability", params=params).json()
                out.append([t["user_message"] for t in page["turns"]])
                cursor = page["next_cursor"]
                if cursor is None:
                    return out

        assert pages(limit=2) == [asked[0:2], asked[2:4], asked[4:5]]
        assert pages(limit=5) == [asked]
        assert pages(limit=3, order="desc") == [asked[::-1][0:3], asked[::-1][3:5]]
        assert pages() == [asked]  # the default limit (20) holds them all
        for params, field in (
            ({"limit": "0"}, "limit"),
            ({"limit": "201"}, "limit"),
            ({"limit": "x"}, "limit"),
            ({"cursor": "-1"}, "cursor"),
            ({"cursor": "abc"}, "cursor"),
            ({"order": "up"}, "order"),
        ):
            reply = http.get(f"/sessions/{session}/explainability", params=params)
            assert reply.status_code == 400 and reply.json()["details"]["field"] == field, reply.text
