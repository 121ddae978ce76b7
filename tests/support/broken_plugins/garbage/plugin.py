"""Broken on purpose: answers everything with text that is not CNL, exit 0."""

import sys

sys.stdin.buffer.read()
print("hello, I am not a CNL document")
