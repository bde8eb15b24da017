"""fio's ``ramp_time``, ``rw`` and a buffered job's ``size`` from the command line and
job files, end to end (``pipeline.fio_jobfile``; the models' own tests are
``tests/models/workload/test_fio_options_{ramp,rw,size}.py``)."""
import pyarrow.parquet as pq
import pytest

from models.checks import MAX_SECONDS
from pipeline.errors import ConfigError
from pipeline.fio_jobfile import expand
from pipeline.run import main


def _row(root):
    (summary,) = root.glob("**/summary.parquet")
    return pq.read_table(summary).to_pylist()[0]


def test_ramp_time_and_runtime_are_each_their_own_key():
    # fio: the job runs ramp_time + runtime and reports runtime
    e = expand({"type": "fio", "runtime": "2s", "ramp_time": "1s"})
    assert (e["runtime_s"], e["ramp_time_s"]) == (2.0, 1.0)
    assert expand({"type": "fio", "runtime": "2s"})["ramp_time_s"] == 0.0


def test_a_job_file_with_a_ramp_and_no_runtime_is_bounded_by_size_alone(tmp_path):
    job = tmp_path / "r.fio"
    job.write_text("[r]\ndirect=1\nramp_time=1s\nsize=1m\n")
    e = expand({"type": "fio", "jobfile": str(job)})
    assert (e["runtime_s"], e["ramp_time_s"]) == (float(MAX_SECONDS), 1.0)
    job.write_text("[r]\ndirect=1\nramp_time=1s\nsize=1m\ntime_based\n")
    with pytest.raises(ConfigError, match="time_based without runtime would run forever"):
        expand({"type": "fio", "jobfile": str(job)})


def test_a_ramped_run_lasts_ramp_plus_runtime(tmp_path, capfd):
    out = tmp_path / "out"
    assert main(["workload=fio_randread", "workload.iodepth=1", "workload.runtime_s=0.05",
                 "workload.ramp_time_s=0.05", f"results.dir={out}",
                 "results.summary=false"]) == 0, capfd.readouterr().err
    row = _row(out)
    assert (row["workload.runtime_s"], row["workload.ramp_time_s"]) == (0.05, 0.05)
    # the runtime, then the read in flight at its end reaped (fio's do_io)
    assert 0.05 < row["fio.runtime_s"] < 0.051
    assert row["sim_seconds"] == pytest.approx(0.05 + row["fio.runtime_s"])


@pytest.mark.parametrize("where", ["command line", "job file"])
def test_rw_rw_is_readwrite(tmp_path, capfd, where):
    out = tmp_path / "out"
    if where == "job file":
        job = tmp_path / "mixed.fio"
        job.write_text("[mixed]\nfilename=/dev/sda\ndirect=1\nrw=rw\nsize=64m\n"
                       "runtime=50ms\ntime_based\n")
        args = ["workload=fio", f"workload.jobfile={job}"]
    else:
        args = ["workload=fio_randread", "workload.rw=rw", "workload.runtime_s=0.05"]
    assert main([*args, f"results.dir={out}", "results.summary=false"]) == 0, \
        capfd.readouterr().err
    row = _row(out)
    assert row["workload.rw"] == "rw"
    assert row["fio.read_iops"] > 0 and row["fio.write_iops"] > 0


def test_a_trim_mode_is_one_line_saying_it_is_not_modelled(tmp_path, capfd):
    out = tmp_path / "out"
    assert main(["workload=fio_randread", "workload.rw=trimwrite", f"results.dir={out}"]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert err == ["error: workload.rw: 'trimwrite' is a fio mode that is not modelled here (no "
                   "trims are issued); modelled: read, write, randread, randwrite, randrw, "
                   "readwrite, rw"]
    assert not out.exists()


def test_a_buffered_job_too_big_for_the_page_state_is_one_line_naming_size(tmp_path, capfd):
    # a 4 TiB file on an 8 TiB volume: was an out-of-memory in File.ensure (33 GiB of
    # per-page arrays)
    out = tmp_path / "out"
    code = main(["workload=fio", "+workload.direct=0", "+workload.size=4t",
                 "+workload.runtime=1s", "device@device.sda=cloud_st1_2t",
                 "device.sda.capacity_bytes=8t", f"results.dir={out}"])
    err = capfd.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == ["error: workload.size: numjobs x (offset + size) (4398046511104 bytes) is "
                   "1073741824 pages of page-cache state (33.0 GiB); the model holds at most "
                   "33554432 pages (128 GiB of files): give a smaller size, or direct=1"]
    assert not out.exists()
