"""Test plugin for the SDK: a kb-plugin whose `retrieve` behaviour is chosen by the prompt.

    sleep <s>      sleep s seconds (deadline tests)       spin           busy-loop until stopped
    swallow        sleep inside `except Exception`         raise          raise RuntimeError
    fail <CODE>    raise PluginFailure(CODE)               invalid        raise InvalidInput
    print          print() and os.write(1) before answering
    bad-return     return a string instead of a document
    anything else  answer with the context items as selected units

`onSourceText` and `onSessionEvent` are not implemented (the SDK answers `unsupported`). Every answer
carries the pid and a per-process call counter in Notes, so tests can see worker reuse.
"""

import os
import time

import msgspec
from mrpvm.plugins.sdk import Call, InvalidInput, Plugin, PluginFailure
from mrpvm.protocol.document import ResolvedIntent


def retrieve(call: Call):
    call.state["served"] = call.state.get("served", 0) + 1
    prompt = call.prompt
    if prompt.startswith("sleep "):
        time.sleep(float(prompt.split()[1]))
    elif prompt == "spin":
        while True:
            pass
    elif prompt == "swallow":
        try:
            time.sleep(30)
        except Exception:
            pass
    elif prompt == "raise":
        raise RuntimeError("boom")
    elif prompt.startswith("fail "):
        raise PluginFailure(prompt.split()[1], "upstream unavailable", {"retryAfterMs": 500})
    elif prompt == "invalid":
        raise InvalidInput("UNSUPPORTED_INPUT", "this probe needs a non-empty context")
    elif prompt == "print":
        print("stray print from a handler")
        os.write(1, b"stray write to fd 1\n")
    elif prompt == "bad-return":
        return "not a document"
    units = [msgspec.structs.replace(u, score=1.0, resolvedFor=["intent-1"]) for u in call.context_units()]
    resolved = ResolvedIntent(index=1, sufficient=bool(units), selected=[u.id for u in units])
    return call.reply(
        "success",
        "medium",
        result=f"{len(units)} units",
        notes=f"pid={os.getpid()} served={call.state['served']} op={call.op}",
        resolved=[resolved],
        units=units,
    )


plugin = Plugin("sdk-probe", "kb-plugin", {"retrieve": retrieve})

if __name__ == "__main__":
    plugin.main()
