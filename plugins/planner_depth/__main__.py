"""planner-depth entry point. Not implemented yet: every op answers `unsupported`."""

from mrpvm.plugins.sdk import Plugin

plugin = Plugin("planner-depth", "mrp-plan-plugin", {})

if __name__ == "__main__":
    plugin.main()
