"""Traces users have: fio iolog v2/v3 and blkparse's default text, beside the DiskSim
and CSV formats, read by format detection or ``workload.iolog_format``; errors name
the file, the line and the format expected."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from pipeline.run import main
from pipeline.trace_formats import detect_format, parse_blkparse, parse_fio_iolog
from pipeline.trace_job import read_trace_head

IOLOG_V2 = """fio version 2 iolog
/dev/sda add
/dev/sda open
/dev/sda read 0 4096
/dev/sda wait 2000 0
/dev/sda write 8192 4096
/dev/sda wait 50 0
/dev/sda sync 0 0
/dev/sda trim 0 4096
/dev/sda read 4096 8192
/dev/sda close
"""

IOLOG_V3 = """fio version 3 iolog
0 /dev/sdb add
0 /dev/sdb open
100 /dev/sdb read 0 4096
350 /dev/sdb write 1048576 65536
900 /dev/sdb datasync 0 0
1200 /dev/sdb close
"""

# blkparse -i sda: two devices; on 8,0 two bios back-merged into one request (one C)
BLKPARSE = """\
  8,0    1        1     0.000000000  1234  Q   W 1000 + 8 [mysqld]
  8,0    1        2     0.000001000  1234  G   W 1000 + 8 [mysqld]
  8,0    1        3     0.000010000  1234  Q   W 1008 + 8 [mysqld]
  8,0    1        4     0.000011000  1234  M   W 1008 + 8 [mysqld]
  8,16   0        1     0.000020000  4321  Q   R 55 + 8 [cp]
  8,0    1        5     0.000050000  1234  D   W 1000 + 16 [mysqld]
  8,0    0        6     0.004050000     0  C   W 1000 + 16 [0]
  8,0    1        7     0.005000000  1234  Q  RS 2048 + 32 [mysqld]
  8,0    1        8     0.005000500     0  m   N cfq1234 insert_request
  8,0    1        9     0.005001000  1234  Q FWS 0 + 0 [mysqld]
  8,0    0       10     0.013000000     0  C  RS 2048 + 32 [0]
  8,0    0       11     0.014000000     0  C FWS 0 [0]
  8,16   0        2     0.020000000     0  C   R 55 + 8 [0]
CPU0 (8,0):
 Reads Queued:           1,       16KiB  Writes Queued:           2,        8KiB
Total (8,0):
"""


def _lines(text):
    return text.splitlines(keepends=True)


def test_fio_iolog_v2_is_closed_loop_with_its_waits_sync_as_flush_trims_skipped():
    t = parse_fio_iolog(_lines(IOLOG_V2), "x.log")
    assert t.mode == "closed"
    assert t.ops.tolist() == [0, 1, 2, 0]                     # read, write, flush, read
    assert t.offset_bytes.tolist() == [0, 8192, 0, 4096]
    assert t.size_bytes.tolist() == [4096, 4096, 0, 8192]
    # wait 2000 us after the first read; a wait below 100 us is discarded (fio)
    assert t.time_ns.tolist() == [2_000_000, 0, 0, 0]
    assert t.skipped == 1 and t.lines.tolist() == [4, 6, 8, 10]


def test_fio_iolog_v3_is_open_loop_at_its_timestamps_in_microseconds():
    t = parse_fio_iolog(_lines(IOLOG_V3), "y.log")
    assert t.mode == "open"
    assert t.ops.tolist() == [0, 1, 2]
    assert t.time_ns.tolist() == [0, 250_000, 800_000]        # relative to the first
    assert t.size_bytes.tolist() == [4096, 65536, 0]


def test_blkparse_q_events_of_one_device_with_q_to_c_as_the_measured_time():
    with pytest.raises(ValueError, match=r"b\.txt line 5: events of several devices \(8,0, 8,16\)"):
        parse_blkparse(_lines(BLKPARSE), "b.txt")
    t = parse_blkparse(_lines(BLKPARSE), "b.txt", device="8,0")
    assert t.mode == "open"
    assert t.ops.tolist() == [1, 1, 0, 2]
    assert t.offset_bytes.tolist() == [1000 * 512, 1008 * 512, 2048 * 512, 0]
    assert t.size_bytes.tolist() == [4096, 4096, 16384, 0]
    assert t.time_ns.tolist() == [0, 10_000, 5_000_000, 5_001_000]
    # both merged bios complete with the one C of their request
    assert t.measured_ns.tolist() == [4_050_000, 4_040_000, 8_000_000, 8_999_000]
    other = parse_blkparse(_lines(BLKPARSE), "b.txt", device="8,16")
    assert other.offset_bytes.tolist() == [55 * 512] and other.measured_ns.tolist() == [19_980_000]


def test_formats_are_detected_from_the_first_line(tmp_path):
    for name, text, fmt in (("a.log", IOLOG_V2, "iolog"), ("b.log", IOLOG_V3, "iolog"),
                            ("c.txt", BLKPARSE, "blkparse"), ("d.csv", "time_us,op,o,s\n", "csv"),
                            ("e.trace", "R 0 10 8 1.0 0.5\n", "validate")):
        p = tmp_path / name
        p.write_text(text)
        assert detect_format(p) == fmt, name
    head = read_trace_head(tmp_path / "a.log", "auto", 2)
    assert head.ops.tolist() == [0, 1] and head.lines.tolist() == [4, 6]


@pytest.mark.parametrize("text, fmt, msg", [
    ("fio version 3 iolog\n0 /f add\n0 /f open\n10 /f read 0\n", "iolog",
     r"t line 4: expected '<usec> <file> add\|open\|close' or .* \(fio version 3 iolog\)"),
    ("fio version 2 iolog\n/f add\n/f read 0 4096\n", "iolog",
     r"t line 3: I/O on '/f', which is not open"),
    ("fio version 2 iolog\n/f add\n/f open\n/f scribble 0 4096\n", "iolog",
     r"t line 4: action must be read, write"),
    ("fio version 3 iolog\n0 /f add\n0 /f open\n5 /f wait 100 0\n", "iolog",
     r"t line 4: 'wait' is not allowed in a fio version 3 iolog"),
    ("fio version 4 iolog\n", "iolog", r"t line 1: expected the header 'fio version 2 iolog'"),
    ("  8,0 1 1 0.0 1 Q W 1 + 8 [x]\nnot an event\n", "blkparse",
     r"t line 2: expected 'maj,min cpu seq seconds pid action RWBS sector \+ sectors \[process\]'"),
])
def test_errors_name_the_file_the_line_and_the_format_expected(tmp_path, text, fmt, msg):
    p = tmp_path / "t"
    p.write_text(text)
    with pytest.raises(ValueError, match=msg):
        read_trace_head(p, fmt, 0)


def test_a_v3_iolog_replays_through_the_cli_and_a_bad_line_is_one_line_exit_2(tmp_path, capfd):
    log = tmp_path / "app.iolog"
    log.write_text(IOLOG_V3)
    out = tmp_path / "out"
    assert main(["workload=trace", f"workload.iolog={log}", "workload.mode=auto",
                 f"results.dir={out}", "results.summary=false"]) == 0, capfd.readouterr().err
    (summary,) = out.glob("**/summary.parquet")
    row = pq.read_table(summary).to_pylist()[0]
    assert (row["trace.requests"], row["trace.flushes"], row["trace.writes"]) == (3, 1, 1)
    assert row["workload.iolog_sha256"]
    capfd.readouterr()
    # replayed closed loop, its timestamps would be read as waits: refused
    assert main(["workload=trace", f"workload.iolog={log}", "workload.mode=closed",
                 f"results.dir={out}"]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "workload.mode" in err[0] and "mode=open" in err[0], err
    log.write_text(IOLOG_V3.replace("350 /dev/sdb write 1048576 65536", "350 /dev/sdb write x 1"))
    assert main(["workload=trace", f"workload.iolog={log}", "workload.mode=auto",
                 f"results.dir={out}"]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "app.iolog line 5: offset must be an integer" in err[0], err


def test_blkparse_repeated_sectors_and_flushes_complete_in_order():
    text = ("  8,0 0 1 0.000 1 Q WS 64 + 8 [a]\n"
            "  8,0 0 2 0.001 1 Q FWS [a]\n"
            "  8,0 0 3 0.002 1 Q WS 64 + 8 [a]\n"          # the same sector, still in flight
            "  8,0 0 4 0.003 1 Q FWS [a]\n"
            "  8,0 0 5 0.010 0 C WS 64 + 8 [0]\n"
            "  8,0 0 6 0.011 0 C FWS 0 [0]\n"
            "  8,0 0 7 0.012 0 C WS 64 + 8 [0]\n"
            "  8,0 0 8 0.013 0 C FWS 0 [0]\n")
    t = parse_blkparse(_lines(text), "f.txt")
    assert t.ops.tolist() == [1, 2, 1, 2]
    assert t.measured_ns.tolist() == [10_000_000, 10_000_000, 10_000_000, 10_000_000]
