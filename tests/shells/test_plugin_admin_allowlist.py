"""`plugin run/check` decide "allow-listed" with the registry's rule: an id bound to its folder
(`id` = the wrapper folder named so, `id=folder` = that folder name or absolute path)."""

from __future__ import annotations

import shutil

import pytest
from cli_support import BROKEN, check_json, cli_env
from mrpvm.kernel.config import load_config
from mrpvm.shells.plugin_tools.admin import open_registry, resolve_target


@pytest.fixture
def impostor(tmp_path):
    """A copy of the `garbage` test plugin in a folder of another name: its manifest claims id `garbage`."""
    folder = tmp_path / "impostor"
    shutil.copytree(BROKEN / "garbage", folder)
    return folder


def target(tmp_path, allowlist: str, folder):
    env = cli_env(tmp_path / "home") | {"MRPVM_PLUGIN_ALLOWLIST": allowlist, "MRPVM_WRAPPER_FOLDERS": ""}
    config, _ = load_config(env)
    _, registry = open_registry(env)
    return resolve_target(str(folder), registry, config)


def test_an_id_alone_allows_only_the_folder_of_that_name(tmp_path, impostor):
    own = target(tmp_path, "garbage", BROKEN / "garbage")
    assert own.allowlisted and own.refusal is None
    copy = target(tmp_path, "garbage", impostor)
    assert not copy.allowlisted and "allow-listed for the folder 'garbage'" in (copy.refusal or "")


def test_an_id_bound_to_a_path_allows_that_folder_only(tmp_path, impostor):
    bound = target(tmp_path, f"garbage={impostor}", impostor)
    assert bound.allowlisted
    original = target(tmp_path, f"garbage={impostor}", BROKEN / "garbage")
    assert not original.allowlisted and str(impostor) in (original.refusal or "")
    named = target(tmp_path, "garbage=impostor", impostor)  # a folder name
    assert named.allowlisted
    absent = target(tmp_path, "other", impostor)
    assert not absent.allowlisted and "not on the plugin allowlist" in (absent.refusal or "")


def test_plugin_check_says_why_the_kernel_would_not_load_it(tmp_path, impostor):
    env = cli_env(tmp_path / "home") | {"MRPVM_PLUGIN_ALLOWLIST": "garbage"}
    _, report = check_json(env, str(impostor))
    assert any("allow-listed for the folder 'garbage'" in note for note in report["notes"]), report["notes"]
    _, report = check_json(env, str(BROKEN / "garbage"))
    assert not any("allowlist" in note or "allow-listed" in note for note in report["notes"]), report["notes"]
