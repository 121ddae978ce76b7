"""Yes/No from the sentence that states the asked proposition in other words (issue 20: false refusals).

"Should administrators change the priority table manually?" over "We strongly discourage site
administrators from editing the priority table by hand": no sentence states the proposition in the
question's words and the paraphrase is below the closest-in-meaning bar; the sentence that states most of
its words and means nearly the same answers, its negative verb turning it to No (weak evidence). A command
under a condition ("if your job writes checkpoints …, do *not* place them in a tmpfs mount") answers with
its condition quoted instead of being skipped. Questions the document does not answer stay refused."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.clauses import tokenize
from mrpvm.plugins.gs_symbolic.polar_reader import _turns, lemmas, read_clause
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

README = """# Tidewater: a batch scheduler for small clusters

## Jobs and their children

Tidewater runs each submitted job under its own supervisor. By default, the supervisor only watches the
process it started. So if a job forks workers of its own, the children won't be restarted by Tidewater
by default when they crash. To watch forked workers too, start the job with `--follow-forks`.

## Queues

Every queue has a priority between 1 and 9. Operators may rename a queue at any time; the jobs in it keep
their place. We strongly discourage site administrators from editing the priority table by hand once the
cluster holds jobs.

## Manifests

Each job carries a manifest in TOML. The `[resources]` section lists the cores and memory it asks for.
Schedulers should not demand the presence of the `[resources]` section. A manifest may omit
it, and the job then gets one core and 512 MiB.

## Storage

Scratch space lives under /scratch and is wiped nightly. However, if your job writes checkpoints that must
survive the night, then keep them under /persist, but do *not* place them in a `tmpfs` mount.
"""


def _answer(question: str) -> str:
    return ask(question, units_of(README, "tidewater.md")).answer


def test_an_irregular_plural_is_its_singular() -> None:
    assert lemmas({"children"}) == {"child"}
    assert lemmas({"peopl", "queue"}) == {"person", "queue"}


def test_a_refusal_of_what_lacks_a_thing_asks_whether_it_is_required() -> None:
    assert _turns(tokenize("Should a scheduler reject a manifest that has no section")) % 2 == 0
    said = read_clause(
        "Schedulers should not demand the presence of the `[resources]` section.",
        {"schedul": 1.0, "resourc": 1.0, "section": 1.0},
        set(),
    )
    assert said is not None and said.negated and not said.condition


def test_emphasis_and_code_marks_do_not_cut_the_clause() -> None:
    said = read_clause(
        "However, if your job writes checkpoints, then keep them under /persist, but do *not* place them "
        "in a `tmpfs` mount.",
        {"tmpfs": 2.0, "mount": 2.0, "place": 1.0, "checkpoint": 2.0},
        {"tmpfs"},
    )
    assert said is not None and said.negated
    assert said.condition == "if your job writes checkpoints"


@needs_model
def test_a_discouraged_change_answers_no() -> None:
    answer = _answer("Should administrators change the priority table manually?")
    assert answer.startswith("No."), answer
    assert "strongly discourage" in answer


@needs_model
def test_a_command_under_a_condition_answers_with_the_condition() -> None:
    answer = _answer("Should a job whose checkpoints must survive the night put them in a tmpfs mount?")
    assert answer.startswith("No, if your job writes checkpoints that must survive the night."), answer
    assert "do *not* place them" in answer


@needs_model
def test_questions_the_readme_does_not_answer_stay_refused() -> None:
    for question in (
        "Should administrators paint the cluster racks blue?",
        "Does Tidewater encrypt the scratch space?",
    ):
        assert _answer(question) == NO_CONTEXT_ANSWER, question
