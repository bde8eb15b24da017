"""The code version on every row: an uncommitted tree is told apart by its sources."""
from __future__ import annotations

import subprocess

import pytest

from pipeline import version


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "models" / "m.py").write_text("X = 1\n")
    (tmp_path / "pipeline" / "p.py").write_text("Y = 1\n")
    monkeypatch.setattr(version, "ROOT", tmp_path)
    version.code_version.cache_clear()
    yield tmp_path
    version.code_version.cache_clear()


def _describe(monkeypatch, out: str) -> None:
    done = subprocess.CompletedProcess([], 0, stdout=out + "\n", stderr="")
    monkeypatch.setattr(version.subprocess, "run", lambda *a, **k: done)


def test_a_clean_checkout_is_its_git_description(tree, monkeypatch):
    _describe(monkeypatch, "abc1234")
    assert version.code_version() == "git:abc1234"


def test_each_uncommitted_state_has_its_own_version(tree, monkeypatch):
    _describe(monkeypatch, "abc1234-dirty")
    first = version.code_version()
    assert first.startswith("git:abc1234-dirty.") and len(first) == len("git:abc1234-dirty.") + 12
    version.code_version.cache_clear()
    assert version.code_version() == first                     # same sources, same version
    (tree / "models" / "m.py").write_text("X = 2\n")            # an edit to a model
    version.code_version.cache_clear()
    second = version.code_version()
    assert second != first
    (tree / "conf.yaml").write_text("a: 1\n")                  # configs are in the config hash
    version.code_version.cache_clear()
    assert version.code_version() == second
