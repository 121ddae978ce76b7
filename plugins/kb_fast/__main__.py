"""kb-fast: lexical-first retrieval with a small budget (DS023). The cheapest kb plugin.

Weighted BM25 (DS009 fields) over the inline units and the mounted KB's tantivy index, then the kb family's
goal-conditioned selection (plugins/kb_common) with a tight budget and a strict relative cut.
"""

from mrpvm.plugins.kb_common import Retriever, SelectionConfig
from mrpvm.plugins.sdk import Plugin

CONFIG = SelectionConfig(
    budget={"specific": 4, "moderate": 4, "broad": 5},
    relative_cut=0.45,
    pool=20,
    max_chars=1000,
)

retriever = Retriever("kb-fast", CONFIG)
plugin = Plugin("kb-fast", "kb-plugin", retriever.handlers())

if __name__ == "__main__":
    plugin.main()
