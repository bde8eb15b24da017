"""The end-of-sweep table: runs named by the parameters that vary, the experiment's
``meta.headline`` metrics first, numbers right-aligned and never split, one number of
decimals per column, and a table that fits 80, 100 and 120 columns (and a pipe).

The acceptance case: the aio_batch and group_commit sweeps, run as a user runs them
(``python -m pipeline.run -m experiment=...``, serial) with ``COLUMNS=80``; the table
they print is parsed back and every headline value of every run is found whole, in its
run's row. group_commit runs at a tiny ``run.scale`` (48 runs of 50 queries): the
table is what is tested, not the published effect."""
from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.text import Text

from pipeline import query, summary, table
from pipeline.naming import swept_keys
from pipeline.run import main

SWEEPS = {
    "aio_batch": ["workload.runtime_s=0.08", "workload.ramp_time_s=0.02"],
    "group_commit": ["run.scale=0.0005"],
}
HEADLINE = {
    "aio_batch": ["iostat.sda.rMB_s", "iostat.sda.r_s"],
    "group_commit": ["mysqlslap.tps", "mysqlslap.fsyncs_per_trx_redo", "mysqlslap.fsyncs_redo_s"],
}
KEYS = {
    "aio_batch": ["bs", "iodepth_batch_submit"],
    "group_commit": ["commit_protocol", "innodb_support_xa", "concurrency", "battery_backed"],
}


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """experiment -> (results dir, what the sweep printed on stdout and stderr at 80 columns)."""
    out = {}
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "80")
    try:
        for name, extra in SWEEPS.items():
            root = tmp_path_factory.mktemp(name) / "outputs"
            cap_out, cap_err = io.StringIO(), io.StringIO()
            mp.setattr("sys.stdout", cap_out)
            mp.setattr("sys.stderr", cap_err)
            code = main(["-m", f"experiment={name}", "hydra/launcher=serial",
                         f"results.dir={root}", *extra])
            mp.undo()
            mp.setenv("COLUMNS", "80")
            assert code == 0, cap_err.getvalue()
            out[name] = (root, cap_out.getvalue(), cap_err.getvalue())
    finally:
        mp.undo()
    return out


def _rows(printed: str) -> list[list[str]]:
    """The data rows of the printed table(s): the lines after a ``---`` rule, cut at
    runs of two or more spaces."""
    rows, inside = [], False
    for line in printed.splitlines():
        if re.fullmatch(r"-+( +-+)*", line.strip()):
            inside = True
            continue
        if not line.strip():
            inside = False
        elif inside:
            rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def _number(cell: str) -> float:
    assert re.fullmatch(r"-?\d{1,3}(,\d{3})*(\.\d+)?", cell), cell
    return float(cell.replace(",", ""))


@pytest.mark.parametrize("name", list(SWEEPS))
def test_at_80_columns_every_headline_value_is_whole_in_its_runs_row(sweeps, name):
    root, printed, _ = sweeps[name]
    printed = "\n".join(ln for ln in printed.splitlines() if not ln.startswith("warning: "))
    assert max(len(ln) for ln in printed.splitlines()) <= 80, printed
    con = query.connect(root)
    cols = KEYS[name] + HEADLINE[name]
    hashes = [r[0] for r in con.execute("SELECT config_hash FROM runs").fetchall()]
    res = summary.sweep_summary(root, hashes, HEADLINE[name], swept_keys([name]))
    assert res.columns[:len(cols)] == cols      # the run's name, then the headline
    rows = _rows(printed)
    assert len(rows) == len(hashes)             # one table: every headline fits at 80
    decimals = {}
    for want, got in zip(res.rows, rows):
        assert got[:len(KEYS[name])] == [table._text(v) for v in want[:len(KEYS[name])]]
        for i, col in enumerate(HEADLINE[name], start=len(KEYS[name])):
            value = _number(got[i])
            decimals.setdefault(col, set()).add(len(got[i].partition(".")[2]))
            assert value == pytest.approx(want[i], rel=5e-3, abs=5e-5), (col, got[i], want[i])
    assert all(len(d) == 1 for d in decimals.values()), decimals   # one format per column
    # through a rich Console of 80 columns nothing is re-wrapped
    buf = io.StringIO()
    Console(file=buf, width=80, force_terminal=False).print(Text(printed), end="")
    assert _rows(buf.getvalue()) == rows


@pytest.mark.parametrize("name", list(SWEEPS))
def test_progress_lines_name_runs_by_their_varying_parameters(sweeps, name):
    _, _, err = sweeps[name]
    done = [ln for ln in err.splitlines() if re.match(r"\[\d+/\d+\] ok ", ln)]
    assert done and not any(re.search(r"\b[0-9a-f]{16}\b", ln) for ln in done), err
    first = {"aio_batch": "bs=16k iodepth_batch_submit=1",
             "group_commit": "commit_protocol=mysql51_builtin innodb_support_xa=true "
                             "concurrency=1 battery_backed=true"}[name]
    assert done[0].startswith(f"[1/{len(done)}] ok {first} ("), done[0]


@pytest.mark.parametrize("width", [80, 100, 120])
@pytest.mark.parametrize("name", list(SWEEPS))
def test_the_table_fits_each_width_and_keeps_numbers_whole(sweeps, name, width):
    root = sweeps[name][0]
    con = query.connect(root)
    hashes = [r[0] for r in con.execute("SELECT config_hash FROM runs").fetchall()]
    res = summary.sweep_summary(root, hashes, HEADLINE[name], swept_keys([name]))
    buf = io.StringIO()
    query.print_table(res, out=buf, width=width)
    text = buf.getvalue()
    assert max(len(ln) for ln in text.splitlines()) <= width
    rows = _rows(text)
    assert len(rows) % len(hashes) == 0          # split into tables of whole rows, if at all
    for row in rows:
        for cell in row[len(KEYS[name]):]:
            if re.match(r"^-?[\d,.]+$", cell):
                _number(cell)


def test_a_pipe_without_columns_gets_120(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert table.output_width(io.StringIO()) == table.PIPE_WIDTH == 120
    monkeypatch.setenv("COLUMNS", "100")
    assert table.output_width(io.StringIO()) == 100


def test_numbers_share_decimals_and_headers_wrap_at_dots_and_underscores():
    assert table.format_column([7855.6, 122.74, None]) == ["7,856", "123", ""]
    assert table.format_column([0.1273, 27.41]) == ["0.127", "27.410"]
    assert table.format_column([2.0, 0.35]) == ["2.000", "0.350"]
    assert table.format_column([100.0, 3.0]) == ["100", "3"]
    assert table.format_column(["16k", "1m"]) == ["16k", "1m"]
    assert table.wrap_header("mysqlslap.fsyncs_per_trx_redo", 10) == [
        "mysqlslap.", "fsyncs_", "per_trx_", "redo"]
    assert table.wrap_header("iostat.sda.r_s", 12) == ["iostat.sda.", "r_s"]


def test_a_table_too_wide_for_the_terminal_is_split_repeating_the_names():
    names = ["bs", "iodepth"] + [f"metric.long_name_{i}" for i in range(12)]
    rows = [("16k", 1, *[1234567.25 * (i + 1) for i in range(12)]),
            ("1m", 64, *[7.5 * (i + 1) for i in range(12)])]
    text = table.render(names, rows, 80, key=2)
    assert max(len(ln) for ln in text.splitlines()) <= 80
    data = _rows(text)
    assert len(data) > 2 and len(data) % 2 == 0
    assert all(r[0] in ("16k", "1m") for r in data)        # each part starts with the name
    cells = [c for r in data for c in r[2:]]
    assert len(cells) == 24 and all(_number(c) > 0 for c in cells)


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("label", ["aio: ray sweep", "fsync_append_overwrite: serial sweep"])
def test_the_live_bar_keeps_counts_elapsed_and_eta_visible(monkeypatch, width, label):
    from pipeline.progress import SweepProgress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("COLUMNS", str(width))
    buf = Terminal()
    with SweepProgress(1048, label, stream=buf, live=True) as p:
        p.finished(True, "x", 1.0)
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buf.getvalue()).replace("\r", "\n")
    bar = [ln for ln in text.splitlines() if "1/1048" in ln][-1]
    assert len(bar) <= width
    assert re.search(r" 1/1048 failed 0 running 0 0:00:0\d eta -:--:--$", bar), bar


def test_runs_of_several_experiments_are_named_within_their_own():
    # pipeline.validate sweeps every experiment at once: a run is named by what varies
    # among its own experiment's runs, not by every column some experiment varies
    from types import SimpleNamespace

    from pipeline.naming import spec_names

    def spec(experiment, **params):
        return SimpleNamespace(experiment=experiment, params=params)

    specs = [spec("aio_batch", **{"workload.bs": "16k", "workload.concurrency": None}),
             spec("aio_batch", **{"workload.bs": "1m", "workload.concurrency": None}),
             spec("group_commit", **{"workload.bs": None, "workload.concurrency": 1}),
             spec("group_commit", **{"workload.bs": None, "workload.concurrency": 30}),
             spec("fsync_barrier", **{"workload.bs": None, "workload.concurrency": None})]
    assert spec_names(specs) == ["aio_batch bs=16k", "aio_batch bs=1m",
                                 "group_commit concurrency=1", "group_commit concurrency=30",
                                 "fsync_barrier"]
