"""The kernel home (kernel/home.py): `home_folder` (a string, for the launch before pathlib loads) names the
folder `home_dir` names, which is pathlib's reading of MRPVM_HOME, else ~/.mrpvm."""

from __future__ import annotations

from pathlib import Path

import pytest
from mrpvm.kernel.home import home_dir, home_folder


@pytest.mark.parametrize("value", ["/srv/mrpvm", "/srv/mrpvm/", "~/kept", "~", "relative/home", "", "/a//b"])
def test_the_home_is_pathlibs_reading_of_mrpvm_home(value: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", "/home/someone")
    env = {"MRPVM_HOME": value} if value else {}
    expected = Path(env.get("MRPVM_HOME") or Path.home() / ".mrpvm").expanduser()
    assert home_dir(env) == expected and Path(home_folder(env)) == expected


def test_a_tilde_that_names_no_home_is_refused_as_pathlib_refuses_it():
    with pytest.raises(RuntimeError):
        home_folder({"MRPVM_HOME": "~no-such-user-anywhere/x"})
