"""Broken on purpose: never validates its input, answers valid CNL with exit 0 even to malformed JSON."""

import sys

sys.stdin.buffer.read()
sys.stdout.write(
    "## Plugin Result\nStatus: success\nPlugin: ignores-bad-json\nConfidence: low\nResult: always fine\n\n"
    "## Answer\nWhatever you asked, this is the answer.\n"
)
