"""A turn of several questions answered from one passage quotes each sentence once (kernel/engine/response.py):
a later answer's list items that an earlier answer already states are left out, unless nothing else is left."""

from __future__ import annotations

from mrpvm.kernel.engine.response import ResponseGroup, unrepeated

DEFUNCT = 'Processes marked <defunct> are dead processes ("zombies") whose parent has not reaped them.'
INIT = "These processes will be destroyed by init(8) if the parent process exits."


def group(n: int, answer: str) -> ResponseGroup:
    return ResponseGroup(
        intentRef=f"intent-{n}", act="identify", intent=f"q{n}", status="success", answerMarkdown=answer
    )


def test_a_later_answer_drops_the_items_an_earlier_one_quotes():
    first, second = unrepeated([group(1, DEFUNCT), group(2, f"- {DEFUNCT}\n- {INIT}")])
    assert first.answerMarkdown == DEFUNCT
    assert second.answerMarkdown == f"- {INIT}"


def test_an_answer_whose_every_item_was_said_before_is_kept_whole():
    answers = [
        g.answerMarkdown
        for g in unrepeated([group(1, f"{DEFUNCT} {INIT}"), group(2, f"- {DEFUNCT}\n- {INIT}")])
    ]
    assert answers[1] == f"- {DEFUNCT}\n- {INIT}"  # an empty answer would read as a refusal


def test_prose_is_untouched_and_a_list_keeps_its_new_items():
    other = "- A zombie holds no memory, only its process table entry."
    groups = [group(1, DEFUNCT), group(2, INIT), group(3, f"{other}\n- {INIT}")]
    assert [g.answerMarkdown for g in unrepeated(groups)] == [DEFUNCT, INIT, other]


def test_an_item_that_is_only_part_of_an_earlier_line_is_kept():
    groups = [group(1, "No. The default is 50 connections at most."), group(2, "- 50\n- No")]
    assert [g.answerMarkdown for g in unrepeated(groups)][1] == "- 50\n- No"
