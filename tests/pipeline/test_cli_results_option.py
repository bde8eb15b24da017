"""Every command that reads the results takes the results root as ``--results`` and as
``--dir`` (pipeline.run writes it as ``results.dir``): a user who learnt one spelling
on one command is not told "unknown option" by the next."""
from __future__ import annotations

import importlib

import pytest

COMMANDS = ("iostat", "query", "report", "report_group_commit", "validate")


@pytest.mark.parametrize("spelling", ["--results", "--dir"])
@pytest.mark.parametrize("command", COMMANDS)
def test_results_root_in_both_spellings(command, spelling, tmp_path, capsys):
    mod = importlib.import_module(f"pipeline.{command}")
    try:
        code = mod.main([spelling, str(tmp_path), "--help"])
    except SystemExit as ex:          # argparse's --help exits; some mains return instead
        code = ex.code
    assert code in (0, None)
    out = capsys.readouterr().out
    assert "--results" in out and "--dir" in out
