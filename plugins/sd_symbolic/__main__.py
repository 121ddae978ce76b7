"""sd-symbolic entry point. Not implemented yet: every op answers `unsupported`."""

from mrpvm.plugins.sdk import Plugin

plugin = Plugin("sd-symbolic", "sd-plugin", {})

if __name__ == "__main__":
    plugin.main()
