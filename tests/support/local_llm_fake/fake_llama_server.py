"""A stand-in for `python -m llama_cpp.server` (same flags) for tests of the LocalLLMServer lifecycle.

The "model" file says what to do: `ok` (serve GET /v1/models behind the api key), `crash` (exit 3 at
once), `silent` (never answer), `stubborn` (serve, ignoring SIGTERM: uvicorn finishing an in-flight completion), `spawn` (serve, and start a grandchild whose pid goes to <model>.child).
Every mode writes its own pid to <model>.pid first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

parser = argparse.ArgumentParser()
for flag in ("--model", "--model_alias", "--host", "--port", "--api_key", "--n_ctx", "--n_threads"):
    parser.add_argument(flag)
parser.add_argument("--chat_format")
parser.add_argument("--verbose")
args = parser.parse_args()
model = Path(args.model)
mode = model.read_text().strip()
Path(f"{model}.pid").write_text(str(os.getpid()))
print(f"fake llama server: mode {mode}, env keys {sorted(os.environ)}", flush=True)
if mode == "crash":
    print("error: cannot load the model (scripted crash)", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "silent":
    time.sleep(600)
if mode == "stubborn":
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "spawn":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    Path(f"{model}.child").write_text(str(child.pid))


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if self.headers.get("Authorization") != f"Bearer {args.api_key}":
            self.send_response(401)
            self.end_headers()
            return
        body = json.dumps({"object": "list", "data": [{"id": args.model_alias}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


HTTPServer((args.host, int(args.port)), Handler).serve_forever()
