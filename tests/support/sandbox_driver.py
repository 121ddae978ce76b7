"""A kernel in its own process, for the sandbox tests: its environment holds secrets (set by the test),
it owns a real database, and it lets one plugin snoop on it.

    python sandbox_driver.py <plugins folder> <home> <sandbox mode> <plugin id> <behaviour>

`<behaviour>` may contain {pid} and {home}. Prints the plugin's answer (JSON) on stdout.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.store import Store
from mrpvm.kernel.supervisor import Supervisor
from mrpvm.kernel.supervisor.sandbox import Sandbox
from supervisor_support import limits, request


async def main(folder: str, home: str, mode: str, plugin_id: str, behaviour: str) -> None:
    store = Store.open(Path(home))
    try:
        sandbox = Sandbox(SandboxConfig(mode=mode), home)  # type: ignore[arg-type]
        async with Supervisor(Registry.load(Path(folder)), limits=limits(), sandbox=sandbox) as sup:
            prompt = behaviour.format(pid=os.getpid(), home=home)
            result = await sup.call(plugin_id, request(prompt))
            print(result.document.answer)
    finally:
        store.close()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:6])
