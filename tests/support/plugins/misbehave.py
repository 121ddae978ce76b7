"""Test plugin for the supervisor fault matrix: plain Python (no SDK) so it can misbehave precisely.

The request's prompt picks the behaviour (`name` or `name:arg`); one-shot when MRPVM_WORKER is unset,
framed worker otherwise. If MRPVM_TEST_MARKER is set, the process appends its pid to that file at start.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time


def cnl(request_id, answer, status="success", extra=""):
    head = f"## Plugin Result\nStatus: {status}\nPlugin: misbehave\nConfidence: high\nResult: ok\n"
    if request_id is not None:
        head += f"Request: {request_id}\n"
    return f"{head}{extra}\n## Answer\n{answer}\n".encode()


def frame(body):
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def write(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def read_frame(stdin):
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        ch = stdin.read(1)
        if not ch:
            return None
        header += ch
    length = int(header.split(b":", 1)[1].strip())
    return stdin.read(length)


def _read(path, limit=1 << 16):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return None


def snoop(kernel_pid, home):
    """What this process can read of the kernel: its environ (by pid, by parent, by scanning /proc),
    its database and home folder."""
    found = {"kernelEnviron": None, "parentEnviron": None, "scanned": [], "database": None, "home": None}
    raw = _read(f"/proc/{kernel_pid}/environ")
    found["kernelEnviron"] = raw.decode("utf-8", "replace") if raw is not None else None
    raw = _read(f"/proc/{os.getppid()}/environ")
    found["parentEnviron"] = raw.decode("utf-8", "replace") if raw is not None else None
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            raw = _read(f"/proc/{entry}/environ")
            if raw and b"SECRET" in raw:  # only what the test looks for: a busy machine has many processes
                found["scanned"].append(raw.decode("utf-8", "replace"))
    database = os.path.join(home, "mrpvm.db")
    try:
        import sqlite3

        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        found["database"] = [row[0] for row in conn.execute("select name from sqlite_master")]
        conn.close()
    except Exception as err:  # noqa: BLE001 - a test plugin reports whatever happened
        found["database"] = None
        found["databaseError"] = repr(err)
    found["databaseBytes"] = len(_read(database) or b"")
    try:
        found["home"] = sorted(os.listdir(home))
    except OSError:
        found["home"] = None
    return found


def behave(request, worker):
    """The reply bytes (already framed in worker mode), or None after acting out a fault."""
    rid = request.get("id")
    name, _, arg = request.get("prompt", "").partition(":")

    def ok(answer, **kw):
        body = cnl(rid, answer, **kw)
        return frame(body) if worker else body

    if name == "echo":
        return ok(f"echo {arg}")
    if name == "tick":  # arg = "<path>|<status>": a line appended to path (calls run), answer with status
        path, _, status = arg.partition("|")
        with open(path, "a") as f:
            f.write("ran\n")
        return ok(f"ticked {path}", status=status or "success")
    if name == "crash":  # die mid-request with a traceback-like line
        sys.stderr.write("fatal: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(int(arg or 1))
    if name == "crash-json":
        sys.stderr.write(json.dumps({"code": "BOOM", "message": "it broke", "details": {"n": 1}}) + "\n")
        sys.stderr.flush()
        os._exit(int(arg or 1))
    if name == "hang":
        if arg:
            with open(arg, "w") as f:
                f.write(str(os.getpid()))
        time.sleep(3600)
    if name == "garbage":
        write(b"this is not a frame, nor CNL\n")
        if worker:
            time.sleep(3600)
        return b""
    if name == "badcnl":  # Status outside its enum, line 2
        body = b"## Plugin Result\nStatus: splendid\nPlugin: misbehave\n"
        if rid is not None:
            body += b"Request: %s\n" % str(rid).encode()
        return frame(body) if worker else body
    if name == "overcap":  # more problems than the parser's issue cap, then a result block missing Status
        junk = "".join(f"Junk{i}: x\n" for i in range(int(arg or 60)))
        body = f"## Plugin Result\n{junk}Plugin: misbehave\n".encode()
        if rid is not None:
            body += b"Request: %s\n" % str(rid).encode()
        body += b"\n## Intent Group 1\nAct: explain\n"
        return frame(body) if worker else body
    if name == "escape":  # a child that calls setsid (leaves our session) and sleeps `arg` seconds
        child = subprocess.Popen(["sleep", arg or "600"], start_new_session=True)
        return ok(json.dumps({"pid": os.getpid(), "child": child.pid}))
    if name == "snoop":  # arg = "<kernel pid>|<kernel home>": read what a plugin must never see
        return ok(json.dumps(snoop(*arg.split("|", 1))))
    if name == "write":  # arg = a path to create
        try:
            with open(arg, "w") as f:
                f.write("written by a plugin")
            return ok(json.dumps({"written": True}))
        except OSError as err:
            return ok(json.dumps({"written": False, "error": str(err)}))
    if name == "connect":  # arg = a loopback port
        import socket

        try:
            socket.create_connection(("127.0.0.1", int(arg)), timeout=2).close()
            return ok(json.dumps({"connected": True}))
        except OSError as err:
            return ok(json.dumps({"connected": False, "error": str(err)}))
    if name == "get":  # arg = "<loopback port>/<path>": one HTTP GET, the status line and the body's start
        import socket

        port, _, path = arg.partition("/")
        try:
            with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as conn:
                conn.sendall(f"GET /{path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
            head, _, body = data.decode("latin-1").partition("\r\n\r\n")
            return ok(json.dumps({"connected": True, "status": head.split("\r\n")[0], "body": body[:500]}))
        except OSError as err:
            return ok(json.dumps({"connected": False, "error": str(err)}))
    if name == "big":
        return ok("x" * int(arg or 100000))
    if name == "wrongid":
        body = cnl("not-" + str(rid), "wrong id")
        return frame(body)
    if name == "twoframes":
        return ok("first") + ok("second")
    if name == "exit-after":  # answer, then leave (a worker exiting between calls)
        write(ok("bye"))
        os._exit(0)
    if name == "chatty":
        chunk = b"e" * 65536
        for _ in range(int(arg or 16)):
            os.write(2, chunk)
        return ok("chatted")
    if name == "env":
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        info = {"env": dict(os.environ), "cwd": os.getcwd(), "rlimit_as": soft, "pid": os.getpid()}
        return ok(json.dumps(info))
    if name == "spawn-child":  # leave a grandchild behind in our session
        child = subprocess.Popen(["sleep", "600"])
        return ok(json.dumps({"pid": os.getpid(), "child": child.pid}))
    if name == "pid":
        return ok(json.dumps({"pid": os.getpid()}))
    if name == "stderr-exit":  # one-shot exit code with stderr JSON or plain text
        code, _, kind = arg.partition(",")
        if kind == "json":
            sys.stderr.write(
                json.dumps({"code": "PLUGIN_SAID", "message": "explained", "details": {}}) + "\n"
            )
        else:
            sys.stderr.write("something went wrong, no JSON here\n")
        sys.stderr.flush()
        os._exit(int(code))
    if name == "self-kill":
        os.kill(os.getpid(), signal.SIGKILL)
    return ok(f"unknown behaviour {name}")


def main():
    marker = os.environ.get("MRPVM_TEST_MARKER")
    if marker:
        with open(marker, "a") as f:
            f.write(f"{os.getpid()}\n")
    worker = os.environ.get("MRPVM_WORKER") == "1"
    stdin = sys.stdin.buffer
    if not worker:
        reply = behave(json.loads(stdin.read()), worker=False)
        if reply:
            write(reply)
        return
    while True:
        body = read_frame(stdin)
        if body is None:
            return
        reply = behave(json.loads(body), worker=True)
        if reply:
            write(reply)


if __name__ == "__main__":
    main()
