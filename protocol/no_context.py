"""The no-context answer: the sentence an answer holds when the documents do not answer its intent.

Its own module (re-exported by vocab.py) so `mrpvm ask`'s daemon path (shells/cli/answer_text.py) can tell a
refusal without loading typing, which vocab.py's Literals need (a tenth of that path's own start).
"""

NO_CONTEXT_ANSWER = (
    "The session context and persistent KB do not contain enough evidence to answer this intent."
)
