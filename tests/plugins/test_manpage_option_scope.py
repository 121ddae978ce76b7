"""A new user's man pages in one collection (issue 20): "What does the -k option of spoolctl do?" is answered by the
lead sentence of the entry headed by that option in spoolctl's page — the entry *is* "the -k option of spoolctl"
(its heading, its kind, its document) — not by another entry's "This option does not imply -k, --keep" that says
the question's word "option"; and "How do I encrypt a spoolctl queue with a password?" is refused when spoolctl's
page never says either word, though another page of the collection does (the question sets the scope: within
it the words are unknown, as a word of no document is).

The documents are invented, shaped like `man X > X.txt` output (80 columns, options indented by 7 and described
at 14)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from kb_corpus import retrieve_request
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.sdk.embedding import available
from mrpvm.protocol.document import IntentGroup, parse_term_weights
from mrpvm.protocol.envelope import encode_request

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

SPOOLCTL = """SPOOLCTL(1)                  General Commands Manual                 SPOOLCTL(1)

NAME
       spoolctl - drive a print spool

SYNOPSIS
   Usage
       spoolctl --add [-f QUEUE] [OPTIONS] FILE...

       spoolctl --list [-f QUEUE] [OPTIONS]

DESCRIPTION
       spoolctl queues documents for the printers of a spool and reports on
       them. A spool holds one queue per printer.

OPTIONS
       -k, --keep
              (IPP) Keep finished jobs in the queue instead of purging them.
              This is useful to let users reprint a job without sending it
              again. In normal cases when spoolctl finishes a job, it deletes
              the job's pages from the queue at once. This flag makes spoolctl
              keep them until the queue is cleaned.

              Providing -k, --keep multiple times has no extra effect.

       --keep-failed
              Keep only the jobs that failed.

              This option does not imply -k, --keep. You can combine the two
              options.

       -f, --file=QUEUE
              Use queue file or printer QUEUE. If this option is not given,
              spoolctl first examines the environment variable SPOOL_QUEUE.

       -r, --retry <count>
              How many times spoolctl sends a job again after a printer
              refused it. The default is 2.

       -w, --wait <seconds>
              How long spoolctl waits for a free printer before it gives up.
"""

FERRUM = """FERRUM(1)                    General Commands Manual                   FERRUM(1)

NAME
       ferrum - copy files between hosts

OPTIONS
       -k, --key <file>
              Read the private key from file. The key is used to encrypt the
              copy; ferrum asks for its password when the key has one.

       -p, --password-file <file>
              Read the password of the key from file instead of asking for
              it.

       -q, --quiet
              Print nothing but errors.
"""


def _units():
    return units_of(SPOOLCTL, "spoolctl.txt", "spool") + units_of(FERRUM, "ferrum.txt", "ferrum")


def test_an_option_of_a_named_page_is_answered_by_its_own_entry():
    doc = ask("What does the -k option of spoolctl do?", _units())
    assert "Keep finished jobs in the queue instead of purging them" in doc.answer
    assert "does not imply" not in doc.answer
    assert doc.result.status == "success"


def test_a_question_about_what_the_named_page_never_says_is_refused():
    doc = ask("How do I encrypt a spoolctl queue with a password?", _units())
    assert doc.result.status != "success"
    assert not doc.sources  # a refusal, not an answer from another entry of spoolctl's page


def test_an_action_the_named_page_never_names_is_no_success():
    # the usage block names spoolctl and its queue; the action asked is a word of ferrum's page only
    doc = ask("How do I encrypt a spoolctl queue?", _units())
    assert doc.result.status != "success"


def test_the_named_pages_scope_the_known_words():
    question = "How do I encrypt a spoolctl queue with a password?"
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    doc, failure, _ = balanced.run(encode_request(retrieve_request([group], _units())))
    assert doc is not None, failure
    weights = parse_term_weights(doc.resolved[0].termWeights)
    # "encrypt" and "password" stand only in ferrum's page: within spoolctl's they are unknown (weight 0)
    assert weights["encrypt"] == 0.0 and weights["password"] == 0.0
    assert weights["queue"] > 0.0  # a word spoolctl's page holds keeps its weight


@pytest.mark.parametrize(
    "question",
    [
        "How do I encrypt a queue with a password?",
        # a page's name as the part of a compound names no page ("pre-commit" is not git-commit's page)
        "How do I encrypt the pre-spoolctl hook with a password?",
    ],
)
def test_without_a_named_page_the_whole_collection_is_the_scope(question):
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    doc, failure, _ = balanced.run(encode_request(retrieve_request([group], _units())))
    assert doc is not None, failure
    assert parse_term_weights(doc.resolved[0].termWeights)["encrypt"] > 0.0
