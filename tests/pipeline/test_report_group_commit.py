"""E2 report: rows from Parquet summaries to a PNG of throughput vs concurrency."""
import duckdb

from pipeline.report_group_commit import load_rows, main, plot


def _write_results(root):
    con = duckdb.connect()
    n = 0
    for bbu in (True, False):
        for proto, xa, base in (("mysql51_builtin", True, 4000), ("innodb_plugin_104", True, 4000)):
            for c in (1, 5, 30):
                tps = base if proto == "mysql51_builtin" else base * c
                d = root / "experiment=group_commit" / f"run=r{n}"
                d.mkdir(parents=True)
                con.execute(
                    f"""COPY (SELECT 'ok' AS status, '{proto}' AS "engine.commit_protocol",
                    {xa} AS "engine.innodb_support_xa", {c} AS "workload.concurrency",
                    {bbu} AS "device.sda.battery", {tps * (1 if bbu else 0.03)} AS "mysqlslap.tps")
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
