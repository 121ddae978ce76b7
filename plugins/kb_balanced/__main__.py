"""kb-balanced: lexical + HDC/VSA associative retrieval with diversity-aware reranking (DS023, DS024).

The recommended default kb plugin: BM25 candidates and HDC neighbours fused, then MMR over a moderate
budget, on top of the kb family's goal-conditioned selection (plugins/kb_common).
"""

from mrpvm.plugins.kb_balanced.retriever import BalancedRetriever
from mrpvm.plugins.kb_common import SelectionConfig
from mrpvm.plugins.sdk import Plugin
from mrpvm.plugins.sdk.embedding import worker_started

CONFIG = SelectionConfig(
    budget={"specific": 5, "moderate": 6, "broad": 8},
    relative_cut=0.35,
    pool=30,
    max_chars=1600,
)

retriever = BalancedRetriever("kb-balanced", CONFIG)


# a warm worker loads the sentence encoder when an intent's or a unit's vector is not kept, or once idle
plugin = Plugin("kb-balanced", "kb-plugin", retriever.handlers(), on_worker_start=worker_started)

if __name__ == "__main__":
    plugin.main()
