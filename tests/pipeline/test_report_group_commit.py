"""E2 report: rows from Parquet summaries to a PNG of throughput vs concurrency."""
import duckdb
import pytest

from pipeline.report_group_commit import load_rows, main, plot


def _write_results(root, wakeups=(None,)):
    con = duckdb.connect()
    n = 0
    for bbu, wakeup in ((b, w) for b in (True, False) for w in wakeups):
        extra = "" if wakeup is None else f', {wakeup} AS "cpu.wakeup_us"'
        slow = 1 if wakeup is None else 5 / wakeup
        for proto, xa, base in (("mysql51_builtin", True, 4000), ("innodb_plugin_104", True, 4000)):
            for c in (1, 5, 30):
                tps = base if proto == "mysql51_builtin" else base * c
                d = root / "experiment=group_commit" / f"run=r{n}"
                d.mkdir(parents=True)
                con.execute(
                    f"""COPY (SELECT 'ok' AS status, '{proto}' AS "engine.commit_protocol",
                    {xa} AS "engine.innodb_support_xa", {c} AS "workload.concurrency",
                    {bbu} AS "device.sda.battery", {tps * slow * (1 if bbu else 0.03)}
                    AS "mysqlslap.tps"{extra})
                    TO '{d / "summary.parquet"}' (FORMAT PARQUET)""")
                n += 1


def test_rows_from_parquet_and_png(tmp_path):
    _write_results(tmp_path)
    rows = load_rows(tmp_path, None, "mysqlslap.tps")
    assert len(rows) == 12
    assert {r["split"] for r in rows} == {"battery=True", "battery=False"}
    assert {r["case"] for r in rows} == {"5.1 built-in, xa=1", "Plugin 1.0.4, xa=1"}
    out = plot(rows, tmp_path / "e2.png")
    assert out.stat().st_size > 10_000 and out.read_bytes()[:4] == b"\x89PNG"


def test_command_line(tmp_path, capsys):
    _write_results(tmp_path)
    assert main(["--results", str(tmp_path), "--out", str(tmp_path / "x.png")]) == 0
    assert (tmp_path / "x.png").exists()


def test_every_other_varying_parameter_gets_its_own_line(tmp_path):
    """A sweep over a parameter outside the engine case (here cpu.wakeup_us) must not
    draw runs of different settings as one zig-zag line."""
    _write_results(tmp_path, wakeups=(5.0, 20.0))
    rows = load_rows(tmp_path, None, "mysqlslap.tps")
    assert len(rows) == 24
    assert {r["case"] for r in rows} == {f"{e}, xa=1, wakeup_us={w}"
                                         for e in ("5.1 built-in", "Plugin 1.0.4")
                                         for w in (5.0, 20.0)}
    keys = [(r["split"], r["case"], r["concurrency"]) for r in rows]
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("args, expect", [
    (["--results", "{tmp}/nosuch"], "--results: no results under {tmp}/nosuch/"),
    (["--results", "{tmp}/f"], "--results: no results under {tmp}/f/"),
    (["--results", "{tmp}/empty"], "--results: no results under {tmp}/empty/"),
    (["--split", "device.sda.nosuch"], "--split: column 'device.sda.nosuch' not in the results"),
    (["--metric", "mysqlslap.tpz"], "--metric: column 'mysqlslap.tpz' not in the results "
                                    "(did you mean 'mysqlslap.tps'?)"),
    (["--out", "{tmp}/empty"], "--out: '{tmp}/empty' is a directory; give a file name"),
    (["--out", "{tmp}/f/g.png"], "--out: '{tmp}/f' is not a directory"),
], ids=["results-missing", "results-a-file", "results-empty", "unknown-split", "unknown-metric",
        "out-a-directory", "out-under-a-file"])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args, expect):
    _write_results(tmp_path / "res")
    (tmp_path / "f").write_text("")
    (tmp_path / "empty").mkdir()
    before = sorted(tmp_path.rglob("*"))
    args = [a.format(tmp=tmp_path) for a in args]
    code = main(["--results", str(tmp_path / "res"), "--out", str(tmp_path / "g.png"), *args])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and expect.format(tmp=tmp_path) in err, err
    assert out == "" and sorted(tmp_path.rglob("*")) == before
