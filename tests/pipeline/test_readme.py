"""The README opens with the two commands; CI (.ci/run) runs the second one."""
from __future__ import annotations

import re

from .helpers import ROOT


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S)][:2]


def test_readme_opens_with_exactly_two_one_line_commands():
    run, test = _commands()
    assert "\n" not in run and "\n" not in test
    assert "pipeline.run" in run and "pytest" in test
    assert "pip install" in run and "pip install" in test
    text = (ROOT / "README.md").read_text()
    assert text.index(run) < text.index(test) < text.index("## ")


def test_ci_runs_the_readme_test_command_and_stops_only_its_own_processes():
    ci = (ROOT / ".ci" / "run").read_text()
    _, test = _commands()
    assert test in ci.splitlines()
    # its own session, stopped on exit; never `ray stop`, which stops every Ray here
    assert "exec setsid --fork --wait" in ci and re.search(r"trap stop_session EXIT", ci)
    code = "\n".join(l for l in ci.splitlines() if not l.lstrip().startswith("#"))
    assert "pgrep -s $$" in code and "ray stop" not in code
    assert '"$status" -eq 5' in ci
