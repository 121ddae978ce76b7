"""gs-llm-fast: one LLM call (role goal-fast) turns the intent and its evidence into a cited answer."""

from mrpvm.plugins.gs_llm_common import GsVariant, make_plugin

plugin = make_plugin(GsVariant(plugin_id="gs-llm-fast", anchor=__file__))

if __name__ == "__main__":
    plugin.main()
