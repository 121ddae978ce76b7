"""Test plugin for the sandbox's hard limits: plain Python (no SDK), one-shot, attacks picked by the prompt.

    caps               its capability sets, and whether it can remount `/usr` read-write or unmount a folder
    forkbomb:N         start N sleeping children (more than the sandbox allows), then answer how many started
    memory:MB,K        K children that each touch MB MiB (below any per-process limit), then answer
    read:P1|P2...      what it can read at each path (the first 40 bytes, a listing, or null)

The answer is one JSON object (what it saw or did).
"""

import ctypes
import json
import os
import sys
import time

MS_REMOUNT, MS_BIND, MS_RDONLY = 32, 4096, 1
MNT_DETACH = 2


def answer(obj):
    text = json.dumps(obj)
    sys.stdout.write(
        f"## Plugin Result\nStatus: success\nPlugin: hostile\nConfidence: high\nResult: ok\n\n## Answer\n{text}\n"
    )
    sys.stdout.flush()


def caps(arg):
    status = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.startswith("Cap") or key == "NoNewPrivs":
                status[key] = value.strip()
    libc = ctypes.CDLL(None, use_errno=True)
    remount = libc.mount(b"none", b"/usr", None, MS_REMOUNT | MS_BIND, None)
    remount_errno = ctypes.get_errno()
    unmount = libc.umount2((arg or "/usr").encode(), MNT_DETACH)
    unmount_errno = ctypes.get_errno()
    written = False
    try:
        with open("/usr/.mrpvm-remount-probe", "w") as f:
            f.write("x")
        written = True
    except OSError:
        pass
    return {
        "status": status,
        "remount": remount,
        "remount_errno": remount_errno,
        "umount": unmount,
        "umount_errno": unmount_errno,
        "wrote_usr": written,
        "uid": os.getuid(),
    }


def forkbomb(arg):
    started, failed = 0, 0
    for _ in range(int(arg)):
        try:
            pid = os.fork()
        except OSError:
            failed += 1
            continue
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        started += 1
    return {"started": started, "failed": failed}


def memory(arg):
    size_mb, _, count = arg.partition(",")
    children = []
    for _ in range(int(count or 2)):
        pid = os.fork()
        if pid == 0:
            block = bytearray(int(size_mb) << 20)
            for i in range(0, len(block), 4096):  # touch every page: resident, not just reserved
                block[i] = 1
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    time.sleep(20)
    return {"children": len(children)}


def read(arg):
    seen = {}
    for path in arg.split("|"):
        try:
            if os.path.isdir(path):
                seen[path] = sorted(os.listdir(path))
            else:
                with open(path, "rb") as f:
                    seen[path] = f.read(40).decode("utf-8", "replace")
        except OSError:
            seen[path] = None
    return seen


def main():
    request = json.loads(sys.stdin.buffer.read())
    name, _, arg = request["prompt"].partition(":")
    answer({"caps": caps, "forkbomb": forkbomb, "memory": memory, "read": read}[name](arg))


if __name__ == "__main__":
    main()
