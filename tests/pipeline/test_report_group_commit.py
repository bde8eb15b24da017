"""E2 report: rows from Parquet summaries to a PNG of throughput vs concurrency."""
import duckdb

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
