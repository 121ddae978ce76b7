"""Test plugin: a gs-plugin that answers with the prompt and lists its context titles as sources."""

from mrpvm.plugins.sdk import Call, Plugin


def solve(call: Call):
    titles = [item.title for item in call.request.context if item.title]
    return call.reply(
        "success",
        "high",
        result=f"echoed {len(titles)} items",
        answer=f"You asked: {call.prompt}",
        sources=titles,
    )


plugin = Plugin("echo-gs", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
