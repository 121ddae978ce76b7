"""kb-thinkingdb entry point. Not implemented yet: every op answers `unsupported`."""

from mrpvm.plugins.sdk import Plugin

plugin = Plugin("kb-thinkingdb", "kb-plugin", {})

if __name__ == "__main__":
    plugin.main()
