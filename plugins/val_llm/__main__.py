"""val-llm entry point. Not implemented yet: every op answers `unsupported`."""

from mrpvm.plugins.sdk import Plugin

plugin = Plugin("val-llm", "val-plugin", {})

if __name__ == "__main__":
    plugin.main()
