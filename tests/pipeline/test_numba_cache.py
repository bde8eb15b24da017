"""The compiled kernels' cache (pipeline/numba_cache.py): one directory per version of
the model sources, shared by every copy of them - a second checkout, a CI clone, the
code Ray ships to a cluster - and left alone for a NUMBA_CACHE_DIR the user chose."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline import numba_cache

ROOT = Path(__file__).resolve().parents[2]

# compiles (or loads) one small HDD kernel and reports where numba filed it
PROBE = """
import json, os, numpy as np
import pipeline
from models.device.hdd import layout
assert layout.__file__.startswith(os.getcwd()), layout.__file__
layout.zone_index(np.zeros(64), 0)
st = layout.zone_index.stats
print(json.dumps({"hits": sum(st.cache_hits.values()), "misses": sum(st.cache_misses.values()),
                  "path": st.cache_path, "dir": os.environ["NUMBA_CACHE_DIR"]}))
"""


def _copy(dst: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    for pkg in ("models", "pipeline"):
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=skip)
    return dst


def _probe(checkout: Path, cache_home: Path, **env) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_CACHE", "DBIO_SIM_"))} | env
    env.update(PYTHONPATH=str(checkout), XDG_CACHE_HOME=str(cache_home))
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=checkout, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_copy_of_the_same_sources_loads_the_kernels_the_first_compiled(tmp_path):
    cache = tmp_path / "cache"
    first = _probe(_copy(tmp_path / "a"), cache)
    second = _probe(_copy(tmp_path / "b"), cache)
    assert (first["hits"], first["misses"]) == (0, 1)
    assert (second["hits"], second["misses"]) == (1, 0)
    assert first["dir"] == second["dir"] == str(
        cache / "dbio-sim" / "numba" / numba_cache.models_source_hash(ROOT / "models"))
    assert first["path"] == second["path"] == os.path.join(first["dir"], "models", "device", "hdd")


def test_an_edited_model_source_starts_a_cache_of_its_own(tmp_path):
    cache = tmp_path / "cache"
    first = _probe(_copy(tmp_path / "a"), cache)
    edited = _copy(tmp_path / "b")
    with open(edited / "models" / "device" / "hdd" / "drive.py", "a") as f:
        f.write("\n# an edit elsewhere in models/\n")
    second = _probe(edited, cache)
    assert second["dir"] != first["dir"]
    assert (second["hits"], second["misses"]) == (0, 1)


def test_a_cache_directory_the_user_chose_is_left_to_numba(tmp_path):
    mine = tmp_path / "mine"
    got = _probe(_copy(tmp_path / "a"), tmp_path / "cache", NUMBA_CACHE_DIR=str(mine))
    assert got["dir"] == str(mine)
    assert Path(got["path"]).parent == mine         # numba's own per-directory hash
    assert not (tmp_path / "cache").exists()


def test_versions_nobody_used_for_a_month_are_pruned_once_a_day(tmp_path):
    day = 86_400
    now = 1_000 * day
    for name, age_days in (("old", 31), ("recent", 29), ("unmarked_old", 40)):
        d = tmp_path / name
        d.mkdir()
        if name == "unmarked_old":
            os.utime(d, (now - age_days * day,) * 2)
        else:
            (d / ".last_used").touch()
            os.utime(d / ".last_used", (now - age_days * day,) * 2)
    gone = numba_cache.prune(tmp_path, now_s=now)
    assert sorted(p.name for p in gone) == ["old", "unmarked_old"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["recent"]
    # the next look is a day later: a version gone stale meanwhile waits for it
    os.utime(tmp_path / "recent" / ".last_used", (now - 40 * day,) * 2)
    assert numba_cache.prune(tmp_path, now_s=now + day - 1) == []
    assert [p.name for p in numba_cache.prune(tmp_path, now_s=now + day + 1)] == ["recent"]


def test_a_run_marks_its_version_used(tmp_path):
    got = _probe(_copy(tmp_path / "a"), tmp_path / "cache")
    assert (Path(got["dir"]) / ".last_used").exists()
    assert (tmp_path / "cache" / "dbio-sim" / "numba" / ".last_pruned").exists()
