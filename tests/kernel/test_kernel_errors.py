"""kernel/errors.py: every public error keeps its code, HTTP status and calling conventions."""

from __future__ import annotations

from pathlib import Path

import pytest
from mrpvm.kernel import errors
from mrpvm.kernel.errors import BadInput, KbNotFound, KernelError, NotFound
from mrpvm.kernel.llm import LLMError
from mrpvm.shells.evaluation import SuiteError
from mrpvm.shells.local_llm import LocalLLMError
from mrpvm.shells.plugin_tools.admin import InvalidManifest

# The contract other modules, the daemon and clients rely on: name -> (code, status).
CONTRACT = {
    "KernelError": ("KERNEL_ERROR", 500),
    "NotFound": ("NOT_FOUND", 404),
    "SessionNotFound": ("SESSION_NOT_FOUND", 404),
    "KbNotFound": ("KB_NOT_FOUND", 404),
    "TurnNotFound": ("TURN_NOT_FOUND", 404),
    "SourceNotFound": ("SOURCE_NOT_FOUND", 404),
    "UnknownPluginError": ("UNKNOWN_PLUGIN", 404),
    "BadInput": ("BAD_INPUT", 400),
    "ArchiveError": ("BAD_ARCHIVE", 400),
    "ConfigError": ("CONFIG_INVALID", 400),
    "KbExists": ("KB_EXISTS", 409),
    "ValidationFailed": ("VALIDATION_FAILED", 422),
    "IngestError": ("INGEST_FAILED", 422),
    "BudgetExhausted": ("BUDGET_EXHAUSTED", 429),
    "DeadlineExceeded": ("DEADLINE_EXCEEDED", 504),
    "StoreError": ("STORE_ERROR", 500),
    "DiskFull": ("DISK_FULL", 507),
}


def test_every_public_error_is_exported_with_its_code_and_status():
    assert sorted(errors.__all__) == sorted(CONTRACT)
    for name, (code, status) in CONTRACT.items():
        cls = getattr(errors, name)
        assert issubclass(cls, KernelError) and cls.__name__ == name
        assert (cls.default_code, cls.status) == (code, status), name
        if cls is not KernelError:
            err = cls(f"{name} happened", {"k": 1})
            assert (err.code, err.status, err.message, str(err)) == (
                code,
                status,
                f"{name} happened",
                f"{name} happened",
            )
            assert err.to_dict() == {"code": code, "message": f"{name} happened", "details": {"k": 1}}


@pytest.mark.parametrize("name", [n for n in CONTRACT if n != "KernelError"])
def test_fixed_errors_accept_both_calling_conventions(name):
    cls = getattr(errors, name)
    code = CONTRACT[name][0]
    base_style = cls("OTHER_CODE", "message", {"a": 1})
    assert (base_style.code, base_style.message, base_style.details) == ("OTHER_CODE", "message", {"a": 1})
    keyword = cls("message", details={"b": 2}, code="KW_CODE")
    assert (keyword.code, keyword.message, keyword.details) == ("KW_CODE", "message", {"b": 2})
    bare = cls()
    assert (bare.code, bare.message, bare.details) == (code, code, {})


def test_hierarchy_lets_callers_catch_families():
    with pytest.raises(NotFound) as info:
        raise KbNotFound("no KB 'x'", {"kb": "x"})
    assert info.value.status == 404 and info.value.code == "KB_NOT_FOUND"
    assert issubclass(errors.ConfigError, BadInput) and issubclass(errors.UnknownPluginError, NotFound)
    assert not issubclass(errors.KbExists, BadInput)


def test_subclasses_elsewhere_keep_their_codes():
    assert (SuiteError("bad suite").code, SuiteError.status) == ("BAD_SUITE", 400)
    assert isinstance(SuiteError("x"), BadInput)
    manifest = InvalidManifest("broken", Path("/tmp/m.json"))
    assert (manifest.code, manifest.status, manifest.details) == (
        "INVALID_MANIFEST",
        400,
        {"path": "/tmp/m.json"},
    )
    local = LocalLLMError("no model", {"model": "m"})
    assert (local.code, local.status, local.message) == ("LOCAL_LLM_UNAVAILABLE", 503, "no model")
    llm = LLMError("LLM_TIMEOUT", "slow")
    assert (llm.code, llm.status, llm.http_status) == ("LLM_TIMEOUT", 504, 504)


def test_class_keywords_set_code_and_inherit_status():
    class Gone(NotFound, code="GONE_THING"):
        pass

    class Legacy(BadInput):  # the attribute style still works
        default_code = "LEGACY"

    assert (Gone("x").code, Gone.status, NotFound.default_code) == ("GONE_THING", 404, "NOT_FOUND")
    assert (Legacy("x").code, Legacy.status) == ("LEGACY", 400)
