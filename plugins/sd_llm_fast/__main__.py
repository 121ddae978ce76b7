"""sd-llm-fast: LLM seed detection (role seed-fast) and source normalization (role kb-ingest).

One LLM call returns the turn's Intent CNL and Context CNL together; an invalid answer gets one
corrective retry. Without an LLM endpoint (`llm: null`) every op answers `unsupported` at once.
"""

from mrpvm.plugins.sd_llm_common import SdVariant, make_plugin

plugin = make_plugin(SdVariant(plugin_id="sd-llm-fast", anchor=__file__, deep=False))

if __name__ == "__main__":
    plugin.main()
