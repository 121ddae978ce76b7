"""sd-llm-deep: thorough LLM seed detection (role seed-deep) and source normalization (role kb-ingest).

Same protocol as sd-llm-fast with prompts that ask for a richer decomposition (one intent per part of
a multi-part question, criteria, triples) and larger answers.
"""

from mrpvm.plugins.sd_llm_common import SdVariant, make_plugin

plugin = make_plugin(
    SdVariant(plugin_id="sd-llm-deep", anchor=__file__, deep=True, max_tokens=2000, source_max_tokens=3500)
)

if __name__ == "__main__":
    plugin.main()
