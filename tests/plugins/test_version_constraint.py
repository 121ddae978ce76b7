"""A dependency's version constraint answers "which version … need at least?" (issue 20: false refusals).

Packaging notes write a requirement as a constraint ("using keyring-tools (>= 20190412)"), not as a dotted
release nor with the verb the question uses: the constraint is a version whatever its digits, and "need",
"require" and "at least" frame the question (a requirement, a bound) rather than name a thing the documents
must write. A package the notes never constrain stays refused."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.sdk.answer_shapes import find_type, mentions_type
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

NOTES = """Signing keys for the Fernhill mirrors
-------------------------------------

The fernhill-keyring package installs the public keys that sign the Fernhill
mirror indexes into /usr/share/keyrings/.

If you want to trust an extra mirror, you should add its key as a single file
ending with ".asc" into /etc/fernhill/keys.d/ and run 'fernhill-keys --refresh'.

An example package for shipping a site's own mirror keys, using
keyring-tools (>= 20190412) (because it runs hooks), can be found in
/usr/share/doc/fernhill-keyring/examples/site-keys/.

Removing a key file and running 'fernhill-keys --refresh' drops the key again.
"""


def _ask(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(NOTES, "README.Debian"))
    return doc.result.status, doc.answer or ""


def test_the_constraint_answers_the_least_version_needed() -> None:
    for question in (
        "Which version of keyring-tools does the example site keys package need at least?",
        "Which version of keyring-tools does the example site keys package require?",
    ):
        status, answer = _ask(question)
        assert "(>= 20190412)" in answer and status == "success", (question, status, answer)


def test_a_package_never_constrained_is_refused() -> None:
    status, answer = _ask("Which version of gpgv does the example site keys package need at least?")
    assert answer == NO_CONTEXT_ANSWER, (status, answer)


def test_the_constraint_shape() -> None:
    assert mentions_type("depends on keyring-tools (>= 20190412)", "version")
    assert mentions_type("requests>=2", "version") and mentions_type("gem 'rake', '~> 13'", "version")
    assert not mentions_type("a == b", "version")  # a comparison of no number
    assert not mentions_type("it weighs 20190412 grams", "version")  # a bare number is no version
    assert find_type("Added in version 3.4 (>= 2)", "version") == "3.4"  # a dotted version first
