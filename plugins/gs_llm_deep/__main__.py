"""gs-llm-deep entry point. Not implemented yet: every op answers `unsupported`."""

from mrpvm.plugins.sdk import Plugin

plugin = Plugin("gs-llm-deep", "gs-plugin", {})

if __name__ == "__main__":
    plugin.main()
