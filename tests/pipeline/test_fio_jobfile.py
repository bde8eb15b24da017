"""fio as fio speaks: a job file as the workload (its content a parameter by hash), fio's
option names, one-line errors naming the file, line and option, and fio's JSON output
beside the run's Parquet row."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from pipeline.errors import ConfigError
from pipeline.fio_jobfile import expand
from pipeline.fio_json import PERCENTILES
from pipeline.run import main
from pipeline.spec import validate

JOB = """; random reads as a fio user writes them
[global]
ioengine=libaio
direct=1
filename=/dev/sda
runtime=150ms
ramp_time=50ms
time_based

[randread-qd4]
rw=randread
bs=4k
iodepth=4
size=10g
"""


def _row(root):
    (summary,) = root.glob("**/summary.parquet")
    return pq.read_table(summary).to_pylist()[0], summary.parent


def run_job_file(tmp_path, capfd, text: str, name: str = "rr.fio"):
    """Run the job file ``text`` (written as ``name``): (its row, its run directory)."""
    job = tmp_path / name
    job.write_text(text)
    out = tmp_path / "out"
    assert main(["workload=fio", f"workload.jobfile={job}", f"results.dir={out}",
                 "results.summary=false"]) == 0, capfd.readouterr().err
    return _row(out)


def test_a_job_file_is_the_workload_and_fio_json_sits_beside_the_row(tmp_path, capfd):
    row, run = run_job_file(tmp_path, capfd, JOB)
    job, out = tmp_path / "rr.fio", tmp_path / "out"
    assert (row["workload.rw"], row["workload.bs"], row["workload.iodepth"]) == ("randread", "4k", 4)
    # fio's ramp is lead-in time on top of the runtime: runtime_s is the runtime alone now
    # (the model runs ramp + runtime), no longer ramp + runtime
    assert row["workload.runtime_s"] == pytest.approx(0.15) and row["workload.ramp_time_s"] == 0.05
    assert row["workload.filename"] == "sda" and len(row["workload.jobfile_sha256"]) == 64

    doc = json.loads((run / "_details" / "fio.json").read_text())
    assert {"fio version", "timestamp", "jobs", "disk_util"} <= doc.keys()
    (j,) = doc["jobs"]
    assert j["jobname"] == "randread-qd4" and j["job options"]["bs"] == "4k"
    for d in ("read", "write"):
        assert {"io_bytes", "bw", "iops", "runtime", "total_ios", "clat_ns", "lat_ns",
                "slat_ns"} <= j[d].keys()
        assert {"min", "max", "mean", "stddev", "N"} <= j[d]["clat_ns"].keys()
    pct = j["read"]["clat_ns"]["percentile"]
    assert list(pct) == [f"{p:.6f}" for p in PERCENTILES] and "99.000000" in pct
    assert pct["1.000000"] <= pct["50.000000"] <= pct["99.000000"] <= j["read"]["clat_ns"]["max"]
    assert j["read"]["iops"] == row["fio.read_iops"] > 0
    assert j["write"]["iops"] == row["fio.write_iops"] == 0
    assert j["read"]["total_ios"] == row["fio.read_clat_count"]
    assert j["read"]["clat_ns"]["mean"] / 1e6 == pytest.approx(row["fio.read_clat_mean_ms"])
    # the 150 ms, then the reaping of the 4 reads in flight (fio's do_io), ms rounded up
    assert j["read"]["runtime"] == 157
    (disk,) = doc["disk_util"]
    assert disk["name"] == "sda" and disk["util"] == pytest.approx(row["iostat.sda.util_pct"])

    # the file's content is a parameter: an edited file is another run
    job.write_text(JOB.replace("iodepth=4", "iodepth=2"))
    assert main(["workload=fio", f"workload.jobfile={job}", f"results.dir={out}",
                 "results.summary=false"]) == 0
    assert len(list(out.glob("**/summary.parquet"))) == 2


@pytest.mark.parametrize("edit, msg", [
    (("bs=4k", "blocksze=4k"), r"rr\.fio line 12: unknown fio option 'blocksze' \(did you mean 'blocksize'\?\)"),
    (("iodepth=4", "iodepth=4\n[second]\nread_iolog=app.log"),
     r"rr\.fio \[second\]: read_iolog in a file of several jobs is not modelled"),
    (("size=10g\n", "direct=0\n"), r"rr\.fio: buffered I/O \(direct=0, fio's default\) goes "
                                     r"to a file, which needs size="),
    (("runtime=150ms", "runtime=soon"), r"rr\.fio line 6: runtime: expected a time such as 30s"),
    # fio's range syntax is fio's own: refused as not modelled, not as a bad time
    (("bs=4k", "startdelay=1-3"),
     r"rr\.fio line 12: startdelay: fio's random range \('1-3', a value drawn per job clone\) "
     r"is not modelled here: give one time$"),
    (("ioengine=libaio", "ioengine=libiao"), r"rr\.fio line 3: ioengine: .* \(did you mean 'libaio'\?\)"),
    # a bad value the workload's config refuses names the file, the line and the option
    (("bs=4k", "bs=16q"), r"rr\.fio line 12: bs: expected a size such as 4k or 1g, got '16q'$"),
    (("bs=4k", "blocksize=16q"), r"rr\.fio line 12: blocksize: expected a size .* got '16q'$"),
    # a trim mode is fio's own value: refused as not modelled now, not as unknown
    (("rw=randread", "rw=randtrim"), r"rr\.fio line 11: rw: 'randtrim' is a fio mode that is not modelled here"),
    (("rw=randread", "rw=randread\nrandom_distribution=zipf:0"),
     r"rr\.fio line 12: random_distribution: zipf theta must be > 0"),
    (("rw=randread", "rw=randrw\nrwmixread=150"), r"rr\.fio line 12: rwmixread: must be in 0\.\.100, got 150$"),
    (("rw=randread", "rw=randread:0"), r"rr\.fio line 11: rw: the postfix of a random mode"),
    (("rw=randread", "rw=randread:8\nrw_sequencer=same"),
     r"rr\.fio line 12: rw_sequencer: must be one of sequential, identical, got 'same'$"),
    (("rw=randread", "rw=randrw\nrwmixwrite=150"), r"rr\.fio line 12: rwmixwrite: must be in 0\.\.100, got 150$"),
    (("size=10g", "size=10q"), r"rr\.fio line 14: size: expected a size"),
    (("bs=4k", "bs=16q\ndirect=0"), r"rr\.fio line 12: bs: expected a size"),   # fio_buffered
    # a real fio option that is not modelled is not "unknown"
    (("bs=4k", "nrfiles=2"),
     r"rr\.fio line 12: 'nrfiles' is a fio option that is not modelled here \(one file \(or block device\) per job\)$"),
    (("bs=4k", "verify=md5"), r"rr\.fio line 12: 'verify' is a fio option that is not modelled"),
    (("bs=4k", "thinktime_blocks_type=issue"),
     r"rr\.fio line 12: 'thinktime_blocks_type' is a fio option that is not modelled here"),
    (("bs=4k", "sync=always"), r"rr\.fio line 12: sync: must be one of none \(0\), sync \(1\), dsync"),
    # block sizes as fio reads them (models/workload/fio/bs.py)
    (("bs=4k", "bssplit=4k/60:64k/60"),
     r"rr\.fio line 12: bssplit: the percentages add up to 120, more than 100"),
    (("bs=4k", "blocksize_range=64k-4k"), r"rr\.fio line 12: blocksize_range: min above max"),
    (("bs=4k", "bsrange=4k-64k\nbssplit=4k/50:8k/50"),
     r"rr\.fio line 13: bssplit: set bsrange or bssplit, not both"),
    (("bs=4k", "bs=4k,6000"), r"rr\.fio line 12: bs: must be a positive multiple of 512 bytes"),
    (("bs=4k", "blockalign=100"), r"rr\.fio line 12: blockalign: must be a positive multiple of 512 bytes"),
    (("bs=4k", "ba=4k,1k,1k,1k"), r"rr\.fio line 12: ba: expected read\[,write\[,trim\]\]"),
    (("rw=randread", "rw=write:4k\nbsrange=4k-16k"),
     r"rr\.fio line 11: rw: a holed sequential pass \('write:4k'\) with sizes that vary"),
])
def test_job_file_mistakes_are_one_line_naming_file_line_and_option(tmp_path, capfd, edit, msg):
    import re

    job = tmp_path / "rr.fio"
    job.write_text(JOB.replace(*edit))
    out = tmp_path / "out"
    assert main(["workload=fio", f"workload.jobfile={job}", f"results.dir={out}"]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: workload.jobfile: "), err
    assert re.search(msg, err[0]), err[0]
    assert not out.exists()


def test_fio_names_in_the_workload_section_and_read_iolog_replays_a_trace(tmp_path):
    e = expand({"type": "fio", "runtime": "2s", "ramp_time": 500, "thinktime": "2ms",
                "readwrite": "randwrite", "buffered": 0, "rwmixwrite": 30,
                "ioengine": "io_uring"})
    # runtime_s is fio's runtime alone now (the model adds the ramp), no longer 500 + 2
    assert e == {"type": "fio", "runtime_s": 2.0, "ramp_time_s": 500.0,
                 "thinktime_us": 2000.0, "rw": "randwrite", "direct": True,
                 "rwmixread": 70, "ioengine": "io_uring"}
    with pytest.raises(ConfigError, match="runtime"):
        expand({"type": "fio", "runtime": "1s", "runtime_s": 2})
    log = tmp_path / "app.iolog"
    log.write_text("fio version 2 iolog\n/dev/sda add\n/dev/sda open\n/dev/sda read 0 4096\n")
    job = tmp_path / "replay.fio"
    job.write_text(f"[replay]\ndirect=1\nread_iolog={log}\niodepth=2\n")
    assert expand({"type": "fio", "jobfile": str(job)}) == {
        "type": "trace", "iolog": str(log), "mode": "auto", "iodepth": 2}


def test_a_job_file_with_fios_rw_postfix_rw_sequencer_and_loops(tmp_path, compose):
    job = tmp_path / "runs.fio"
    job.write_text(JOB.replace("rw=randread", "rw=randread:8\nrw_sequencer=identical\nloops=2"))
    c = validate(compose("workload=fio", f"workload.jobfile={job}")).workload.config
    assert (c.rw, c.mode, c.rw_sequencer, c.loops) == ("randread:8", "randread", "identical", 2)


def test_the_example_job_file_of_the_readme(compose):
    spec = validate(compose("workload=fio", "workload.jobfile=data/fio/oltp_reads.fio"))
    c = spec.workload.config
    assert (c.rw, c.bs, c.iodepth, c.random_distribution) == ("randread", "16k", 8, "zipf:1.2")
    # runtime=2s ramp_time=500ms: runtime_s is the runtime alone now (it was 2.5, ramp included)
    assert (c.runtime_s, c.ramp_time_s, c.thinktime_us, c.time_based) == (2.0, 0.5, 200.0, True)
    assert spec.workload.extras["filename"] == "sda"


@pytest.mark.parametrize("kernel, flushes_per_write", [("2.6.18", 0), ("3.10", 1), ("5.15", 2)])
def test_the_sync_write_example_flushes_as_its_kernel_does(tmp_path, capfd, kernel,
                                                           flushes_per_write):
    """data/fio/sync_write.fio on the X25-E (SATA: no FUA): an O_SYNC write is a plain
    write on 2.6.18, the write and a FLUSH on 3.10, and on 5.15 a FUA write (the write
    and a FLUSH) then fsync's FLUSH."""
    out = tmp_path / "out"
    assert main(["workload=fio", "workload.jobfile=data/fio/sync_write.fio",
                 "device@device.sda=ssd_x25e", f"kernel={kernel}", "block=default",
                 "+workload.runtime=1s", f"results.dir={out}", "results.summary=false"]) == 0, \
        capfd.readouterr().err
    row, _ = _row(out)
    assert row["workload.sync"] == "1" and row["fio.write_iops"] > 0
    assert row["iostat.sda.f_s"] == pytest.approx(flushes_per_write * row["iostat.sda.w_s"],
                                                  abs=3)


def test_a_job_file_gets_fios_defaults_where_it_is_silent(tmp_path):
    job = tmp_path / "min.fio"
    job.write_text("[seq]\ndirect=1\nruntime=100ms\n")
    e = expand({"type": "fio", "jobfile": str(job)})
    assert {k: e[k] for k in ("rw", "bs", "iodepth", "ioengine", "size", "time_based")} == {
        "rw": "read", "bs": "4k", "iodepth": 1, "ioengine": "psync", "size": "100%",
        "time_based": False}
    # the section's own keys are over the file and fio's defaults
    assert expand({"type": "fio", "jobfile": str(job), "rw": "randwrite"})["rw"] == "randwrite"


def test_fio_options_from_the_command_line(compose, tmp_path):
    spec = validate(compose("workload=fio", "+workload.runtime=100ms", "+workload.thinktime=1ms",
                            "+workload.rate_iops=50"))
    assert spec.workload.config.runtime_s == pytest.approx(0.1)
    assert spec.workload.config.thinktime_us == 1000.0 and spec.workload.config.rate_iops == "50"


def test_a_buffered_job_runs_on_the_filesystem_of_its_device(tmp_path, capfd):
    # fio's default direct=0: the job's file on the filesystem of filename's device,
    # through the page cache; the same fio.* columns and fio.json as direct=1
    row, run = run_job_file(tmp_path, capfd, "[buffered-reads]\nfilename=/dev/sda\n"
                            "rw=randread\nsize=4m\nruntime=100ms\ntime_based\n")
    assert (row["workload.type"], row["workload.direct"], row["placement.data"]) == (
        "fio_buffered", False, "sda")
    # a cold cache: each page read from the device once and kept (a read or a
    # read-ahead window - 32 pages at read_ahead_kb 128; a read at page 0 or next to the
    # previous one starts one - may be in flight when the run ends), a read again is a hit
    assert row["fio.read_iops"] > 0 and row["iostat.sda.r_s"] > 0
    cached = row["fsstat.page_cache.cached_pages"]
    assert cached <= row["fsstat.sda.pages_read"] <= cached + 32
    # random reads read ahead only at page 0 or next to the previous read (a 4-page
    # window: 3 pages no read asked for)
    assert cached <= row["fio.read_clat_count"] + 6
    doc = json.loads((run / "_details" / "fio.json").read_text())
    assert doc["jobs"][0]["read"]["iops"] == row["fio.read_iops"]


def test_several_jobs_a_global_applies_below_it_and_stonewall_new_group_set_groups(tmp_path):
    from pipeline.fio_jobfile import read_jobfile

    job = tmp_path / "many.fio"
    job.write_text("[global]\ndirect=1\nbs=8k\n[a]\nrw=read\n[b]\nnew_group\n"
                   "[global]\nbs=16k\n[c]\nstonewall\n[d]\nbs=4k\n")
    jf = read_jobfile(job)
    assert [(j.name, j.options.get("bs"), j.stonewall, j.groupid) for j in jf.jobs] == [
        ("a", "8k", False, 0), ("b", "8k", False, 1), ("c", "16k", True, 2),
        ("d", "4k", False, 2)]
    e = expand({"type": "fio", "jobfile": str(job), "iodepth": 2})
    assert e["type"] == "fio_jobs" and e["names"] == ["a", "b", "c", "d"]
    assert e["groups"] == [0, 1, 2, 2] and e["stonewall"] == [False, False, True, False]
    # the section's own keys apply to every job, as fio's command-line options
    assert [j["iodepth"] for j in e["jobs"]] == [2, 2, 2, 2]
    assert [j["bs"] for j in e["jobs"]] == ["8k", "8k", "16k", "4k"]


@pytest.mark.parametrize("text, msg", [
    ("[a]\ndirect=1\n[b]\nsize=1m\n", r"x\.fio \[b\]: direct=0 in a file of several jobs"),
    ("[global]\ndirect=1\n[a]\nfilename=/dev/sda\n[b]\nfilename=/dev/sdb\n",
     r"x\.fio: jobs on several devices \(sda, sdb\)"),
    ("[global]\ndirect=1\n[a]\n[b]\nbs=3\n", r"x\.fio line 5 \[b\]: bs: must be a positive multiple"),
    ("[global]\ndirect=1\nbs=16q\n[a]\n[b]\n", r"x\.fio line 3 \[a\]: bs: expected a size"),
    # a trim mode is refused as not modelled now, not as unknown
    ("[global]\ndirect=1\n[a]\nrw=randtrim\n[b]\n", r"x\.fio line 4 \[a\]: rw: 'randtrim' is a fio mode that is not"),
])
def test_several_jobs_mistakes_name_the_file_and_job(tmp_path, text, msg):
    job = tmp_path / "x.fio"
    job.write_text(text)
    with pytest.raises(ConfigError, match=msg) as ex:
        expand({"type": "fio", "jobfile": str(job)})
    assert ex.value.key == "workload.jobfile"



@pytest.mark.parametrize("key", ["bs", "blocksize"])
def test_a_bad_value_over_the_job_file_names_the_key_not_the_file(tmp_path, compose, key):
    # the workload section's own key (or fio-named key) is over the file's: its error
    # names that key, as without a job file
    job = tmp_path / "rr.fio"
    job.write_text(JOB)
    with pytest.raises(ConfigError) as ex:
        validate(compose("workload=fio", f"workload.jobfile={job}", f"+workload.{key}=16q"))
    assert ex.value.key == "workload.bs" and "16q" in ex.value.message

def test_the_several_jobs_example_of_the_readme(compose):
    spec = validate(compose("workload=fio", "workload.jobfile=data/fio/oltp_then_backup.fio"))
    c = spec.workload.config
    assert spec.workload.type == "fio_jobs" and c.names == ("oltp-reads", "redo-writes", "backup")
    assert c.groups == (0, 0, 1) and c.stonewall == (False, False, True)
    assert c.jobs[1].rate_iops == ",200" and c.jobs[2].bs == "1m"


def test_startdelay_is_read_as_fio_reads_a_time(tmp_path):
    job = tmp_path / "d.fio"
    job.write_text("[global]\ndirect=1\nruntime=1s\n[a]\nrw=randread\n[b]\nrw=randwrite\n"
                   "startdelay=250ms\n")
    e = expand({"type": "fio", "jobfile": str(job)})
    assert [j.get("startdelay_s", 0.0) for j in e["jobs"]] == [0.0, 0.25]


def test_blockalign_is_read_as_fio_writes_it(tmp_path):
    """fio's ``ba`` and its alias ``blockalign``: the random offsets' alignment, per
    direction as ``bs`` (``models.workload.fio.bs``)."""
    for name in ("ba", "blockalign"):
        job = tmp_path / f"{name}.fio"
        job.write_text(f"[global]\ndirect=1\n[a]\nrw=randwrite\nbs=4k\n{name}=512\n")
        assert expand({"type": "fio", "jobfile": str(job)})["ba"] == "512"


def test_offset_increment_is_read_as_fio_writes_it(tmp_path):
    """``numjobs`` clones share the region unless ``offset_increment`` moves them
    (``models.workload.fio``): the option goes through as written."""
    job = tmp_path / "inc.fio"
    job.write_text("[global]\ndirect=1\nnumjobs=4\nsize=10g\n[a]\nrw=randread\n"
                   "offset_increment=10g\n")
    e = expand({"type": "fio", "jobfile": str(job)})
    assert (e["numjobs"], e["size"], e["offset_increment"]) == (4, "10g", "10g")


def test_options_without_effect_in_the_simulation_are_accepted_and_change_nothing(tmp_path):
    """A cloud provider's benchmark job file (buffer contents, time-keeping, reaping
    options): read as the same workload as without them."""
    base = "[global]\ndirect=1\nioengine=libaio\nbs=4k\niodepth=64\nnumjobs=4\ntime_based=1\n" \
           "runtime=10s\nsize=1g\n[rr]\nrw=randread\n"
    extra = "gtod_reduce=1\nrefill_buffers\nnorandommap\nrandrepeat=0\ngroup_reporting\n" \
            "iodepth_batch_complete_max=64\nbuffer_compress_percentage=50\nzero_buffers=0\n" \
            "allow_mounted_write=1\nthinktime_spin=0\nrandom_generator=lfsr\n"
    (tmp_path / "a.fio").write_text(base)
    (tmp_path / "b.fio").write_text(base + extra)
    a = expand({"type": "fio", "jobfile": str(tmp_path / "a.fio")})
    b = expand({"type": "fio", "jobfile": str(tmp_path / "b.fio")})
    a.pop("jobfile"), b.pop("jobfile")
    a.pop("jobfile_sha256", None), b.pop("jobfile_sha256", None)
    assert a == b


def test_iodepth_low_is_read_as_fio_writes_it(tmp_path):
    job = tmp_path / "low.fio"
    job.write_text("[global]\ndirect=1\niodepth=32\n[a]\nrw=randread\niodepth_low=16\n")
    assert expand({"type": "fio", "jobfile": str(job)})["iodepth_low"] == 16


def test_fadvise_hint_is_read_as_fio_writes_it(tmp_path):
    job = tmp_path / "fa.fio"
    job.write_text("[global]\nsize=64m\n[a]\nrw=read\nfadvise_hint=0\n")
    assert str(expand({"type": "fio", "jobfile": str(job)})["fadvise_hint"]) == "0"
