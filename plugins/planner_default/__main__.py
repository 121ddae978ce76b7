"""planner-default entry point. Not implemented yet: every op answers `unsupported`."""

from mrpvm.plugins.sdk import Plugin

plugin = Plugin("planner-default", "mrp-plan-plugin", {})

if __name__ == "__main__":
    plugin.main()
