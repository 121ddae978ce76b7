"""Broken on purpose: validates its input like a good plugin, but answers Status: success with no Answer."""

from mrpvm.plugins.sdk import Call, Plugin


def solve(call: Call):
    return call.reply(
        "success", "high", result="solved", sources=[item.title for item in call.request.context]
    )


plugin = Plugin("success-no-answer", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
