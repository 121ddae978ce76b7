"""The SDK's token estimate (plugins/sdk/window.py) against SmolLM2's own tokenizer (the GGUF's vocabulary,
read by llama.cpp): the plugins budget every prompt with it, so it must never count fewer tokens than the
model sees — on each prompt template, and on every stretch of six paragraphs (at least 100 tokens: a
prompt's evidence is a longer run of such paragraphs; a single short line with rare words may be off by a
token or two) of the repository's documents and test suites — without being uselessly loose.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from mrpvm.plugins.sdk.window import estimate_tokens

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def count_tokens():
    from conftest import _not_installed, _unavailable
    from mrpvm.shells import local_llm as local

    reason = _not_installed()
    if reason:
        _unavailable(reason)
    model = local.model_path(
        {"MRPVM_LOCAL_LLM_MODEL": os.environ.get("MRPVM_LOCAL_LLM_MODEL", ""), "HOME": str(Path.home())}
    )
    if not model.is_file():
        _unavailable(f"no local LLM model at {model}: run `make local-llm`")
    import llama_cpp

    vocab = llama_cpp.Llama(model_path=str(model), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=False))


def _documents() -> list[list[str]]:
    files = [*ROOT.glob("plugins/*/prompts/*.md"), *ROOT.glob("docs/**/*.md")]
    files += [p for p in ROOT.glob("tests/support/eval_suites/**/*") if p.is_file()]
    docs = []
    for path in sorted(files):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        docs.append([p for p in re.split(r"\n\s*\n", text) if p.strip()])
    return [d for d in docs if d]


def test_the_estimate_never_undercounts_a_prompt_template(count_tokens) -> None:
    templates = sorted(ROOT.glob("plugins/*/prompts/*.md"))
    assert len(templates) >= 15
    for path in templates:
        text = path.read_text(encoding="utf-8")
        assert estimate_tokens(text) >= count_tokens(text), path


def test_the_estimate_never_undercounts_a_run_of_paragraphs(count_tokens) -> None:
    docs = _documents()
    estimated = real = stretches = 0
    for paragraphs in docs:
        for start in range(0, len(paragraphs), 3):
            text = "\n\n".join(paragraphs[start : start + 6])
            guess, exact = estimate_tokens(text), count_tokens(text)
            if exact < 100:
                continue
            assert guess >= exact, (guess, exact, text[:200])
            estimated, real, stretches = estimated + guess, real + exact, stretches + 1
    assert stretches > 80
    assert estimated <= 1.5 * real  # conservative, not so loose that the evidence budget is wasted
