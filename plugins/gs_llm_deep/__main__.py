"""gs-llm-deep: draft-then-refine (two LLM calls, role goal-deep) for complete, checked answers."""

from mrpvm.plugins.gs_llm_common import GsVariant, make_plugin

plugin = make_plugin(GsVariant(plugin_id="gs-llm-deep", anchor=__file__, deep=True, max_tokens=2000))

if __name__ == "__main__":
    plugin.main()
