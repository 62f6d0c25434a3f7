"""The main job's idle/loaded pairs (bench/main_job_pairs.py): each part from copies of one starting state, the idle
side's cache handed on to the next part, the sides' records, the report's arithmetic, and one real side beside the
busy loop."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import main_job_pairs as mp


@pytest.fixture
def repo(tmp_path):
    """A checkout with two notebooks (the parts are the zoo, then these by name)."""
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    for name in ("10_b", "00_a"):
        (root / "notebooks" / f"{name}.ipynb").write_text("{}")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    return root


def fake_code(repo, env):
    """The code check of a checkout without a .venv: what the real one records."""
    assert "PYTHONPATH" not in env
    return {"nbmerge": str(repo / "nbmerge"), "code_fingerprint": "f" * 64}


def fake_side(seconds):
    """A side that leaves a mark of what it saw in its cache and records a notebook's seconds as the report does."""
    seen = []

    def side(command, env, *, busy, work, neighbour):
        assert neighbour in ("shared", "apart")
        cache = Path(env["NBMERGE_CACHE"])
        part = "zoo" if command[1] == "zoo" else command[command.index("--only") + 1]
        seen.append((part, busy, sorted(p.name for p in cache.iterdir())))
        (cache / f"{part}-{'loaded' if busy else 'idle'}").write_text("")
        assert "NBMERGE_THREADS" not in env and "PYTHONPATH" not in env and env["HF_HUB_OFFLINE"] == "1"
        if part != "zoo":
            out = Path(command[command.index("--out") + 1]) / "runs" / "r1"
            out.mkdir(parents=True)
            (out / "run.json").write_text(json.dumps({"reports": [{"name": part, "seconds": seconds[part, busy]}]}))
        return {"wall_s": seconds[part, busy] + 5, "part_core_s": 1.0, "others_core_s": 0.5,
                "started": "2026-12-06 00:00:00 UTC", "busy_chunk_s": 0.39 if busy else None}
    return side, seen


def test_pairs_start_from_one_state_and_hand_the_idle_cache_on(repo, tmp_path):
    seconds = {("zoo", False): 400, ("zoo", True): 700, ("00_a", False): 100, ("00_a", True): 150}
    side, seen = fake_side(seconds)
    work = tmp_path / "work"
    zoo = mp.run_pair(repo, "zoo", work, side_runner=side, code_check=fake_code)
    assert zoo["sides"]["idle"]["seconds"] == 405 and zoo["sides"]["loaded"]["seconds"] == 705  # the command's wall
    a = mp.run_pair(repo, "00_a", work, side_runner=side, code_check=fake_code)
    assert a["sides"]["idle"]["seconds"] == 100 and a["ratio"] == 1.5  # a notebook: the report's own seconds
    # both sides of a part saw the same state: the zoo's idle cache, never the loaded side's
    assert seen == [("zoo", False, []), ("zoo", True, []), ("00_a", False, ["zoo-idle"]),
                    ("00_a", True, ["zoo-idle"])]
    assert sorted(p.name for p in (work / "state").iterdir()) == ["00_a-idle", "zoo-idle"]
    assert sorted(p.name for p in work.iterdir()) == ["pair-00_a.json", "pair-zoo.json", "state"]  # no scratch left
    assert json.loads((work / "pair-zoo.json").read_text())["commit"] == zoo["commit"]
    with pytest.raises(SystemExit, match="not a part"):
        mp.run_pair(repo, "99_nope", work, side_runner=side, code_check=fake_code)


def paired(repo, work, parts):
    """``parts`` paired in that order with the fake sides (zoo 400/700 s, 00_a 100/150 s): their records."""
    seconds = {("zoo", False): 400, ("zoo", True): 700, ("00_a", False): 100, ("00_a", True): 150}
    side, _ = fake_side(seconds)
    for part in parts:
        mp.run_pair(repo, part, work, side_runner=side, code_check=fake_code)
    return [json.loads(p.read_text()) for p in sorted(work.glob("pair-*.json"))]


def test_the_report_sums_the_paired_parts_and_names_the_rest(repo, tmp_path):
    pairs = paired(repo, tmp_path / "work", ("00_a", "zoo"))
    summary = mp.summarise(pairs, mp.parts(repo))
    assert [p["part"] for p in summary["pairs"]] == ["zoo", "00_a"]  # the main job's order
    assert summary["ratio"] == pytest.approx((705 + 150) / (405 + 100)) and summary["missing"] == ["10_b"]
    markdown = mp.render(summary, {"date_utc": "today", "cpu_count": 2})
    # the fake sides used 1 core-s in 405 and 705 s: 0.00 cores
    assert "| zoo | 0:06:45 | 0:11:45 | 1.74× | 0.00 / 0.00 | 0 |" in markdown and "Not paired yet: 10_b" in markdown
    pairs[1]["sides"]["idle"].update(part_core_s=810.0)
    del pairs[1]["sides"]["loaded"]["wall_s"]
    assert "| 1.74× | 2.00 / — |" in mp.render(mp.summarise(pairs, mp.parts(repo)), {})
    pairs[0]["sides"]["loaded"]["how"] = "by hand"
    assert "* 00_a, loaded side: by hand." in mp.render(mp.summarise(pairs, mp.parts(repo)), {})
    commit = pairs[0]["commit"]
    assert f"the pairs ran commit {commit[:7]}." in markdown
    mixed = mp.summarise([pairs[0], {**pairs[1], "commit": None}], mp.parts(repo))
    assert mixed["commits"] == [{"commit": None, "parts": ["zoo"]}, {"commit": commit, "parts": ["00_a"]}]
    assert (f"**the pairs did not all run one commit**, so the sum adds parts of different code: zoo: code not known; "
            f"00_a: {commit[:7]}.") in mp.render(mixed, {})


def test_one_report_holds_pairs_beside_one_kind_of_neighbour(repo, tmp_path):
    seconds = {("zoo", False): 400, ("zoo", True): 700, ("00_a", False): 100, ("00_a", True): 150}
    side, _ = fake_side(seconds)
    work = tmp_path / "work"
    pair = mp.run_pair(repo, "zoo", work, side_runner=side, neighbour="apart", code_check=fake_code)
    assert pair["neighbour"] == "apart" and pair["code_fingerprint"] == "f" * 64
    apart = json.loads((work / "pair-zoo.json").read_text())
    summary = mp.summarise([apart], mp.parts(repo))
    assert summary["neighbour"] == "apart" and "in a session of its own" in mp.render(summary, {})
    older = {**mp.run_pair(repo, "00_a", work, side_runner=side, code_check=fake_code)}
    del older["neighbour"]  # a record from before the option: its loop shared the session
    assert mp.summarise([older], mp.parts(repo))["neighbour"] == "shared"
    with pytest.raises(SystemExit, match="several kinds"):
        mp.summarise([apart, older], mp.parts(repo))


def test_a_report_gives_its_pairs_back_to_a_fresh_work_folder(repo, tmp_path):
    work = tmp_path / "work"
    pairs = paired(repo, work, ("zoo", "00_a"))
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"machine": {}, **mp.summarise(pairs, mp.parts(repo))}))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "pair-zoo.json").write_text("{\"part\": \"zoo\", \"mine\": 1}")  # a newer record stays
    assert mp.main(["restore", "--report", str(report), "--work", str(fresh)]) == 0
    assert json.loads((fresh / "pair-zoo.json").read_text()) == {"part": "zoo", "mine": 1}
    assert json.loads((fresh / "pair-00_a.json").read_text()) == json.loads((work / "pair-00_a.json").read_text())
    assert mp.restore(report, fresh) == []
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(SystemExit, match="not a report of this tool"):
        mp.restore(tmp_path / "bad.json", fresh)


def test_a_note_says_how_a_pair_differs_from_one_run_and_the_report_prints_it(repo, tmp_path):
    work = tmp_path / "work"
    paired(repo, work, ("zoo",))
    before = json.loads((work / "pair-zoo.json").read_text())
    assert mp.main(["note", "--work", str(work), "--part", "zoo", "--how", "from a cache built by hand."]) == 0
    after = json.loads((work / "pair-zoo.json").read_text())
    assert after == {**before, "how": "from a cache built by hand"}
    summary = mp.summarise([after], mp.parts(repo))
    assert "* zoo: from a cache built by hand." in mp.render(summary, {})
    with pytest.raises(SystemExit, match="no pair record"):
        mp.note(work, "00_a", "x")
    with pytest.raises(SystemExit, match="say how"):
        mp.note(work, "zoo", "  ")
    assert json.loads((work / "pair-zoo.json").read_text()) == after  # a refused note changes nothing


def test_a_loaded_side_runs_beside_the_busy_loop(tmp_path):
    command = [sys.executable, "-c", "import time; t = time.time()\nwhile time.time() - t < 1.5: pass"]
    side = mp.run_side(command, {}, busy=True, work=tmp_path)
    assert side["wall_s"] >= 1.5 and side["part_core_s"] > 0.5
    assert side["busy_core_s"] > 0.5 and side["busy_chunks"] >= 1 and side["busy_chunk_s"] > 0
    idle = mp.run_side([sys.executable, "-c", "pass"], {}, busy=False, work=tmp_path)
    assert "busy_chunk_s" not in idle and idle["others_core_s"] >= 0
    # apart: the loop runs in a session of its own (the kernel shares CPU time between sessions where autogroup is on)
    from bench.reporting import start_neighbour

    for where, other in (("shared", False), ("apart", True)):
        loop = start_neighbour([sys.executable, "-c", "import time; time.sleep(30)"], where)
        try:
            assert (os.getsid(loop.pid) != os.getsid(0)) is other
        finally:
            loop.kill()
            loop.wait()
    with pytest.raises(ValueError, match="shared or apart"):
        start_neighbour([sys.executable, "-c", "pass"], "elsewhere")
    with pytest.raises(RuntimeError, match="status 3"):
        mp.run_side([sys.executable, "-c", "raise SystemExit(3)"], {}, busy=False, work=tmp_path)


def test_a_pair_runs_the_checkouts_own_code_whatever_this_script_was_started_with(tmp_path, monkeypatch):
    """``PYTHONPATH=.`` to run the tool from another checkout once put that checkout's nbmerge and notebooks in the
    part's place: a side's environment has no PYTHONPATH, and a checkout whose .venv imports nbmerge from elsewhere
    is refused."""
    repo = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    env = mp.side_env(os.environ, tmp_path / "cache")
    assert "PYTHONPATH" not in env and env["NBMERGE_CACHE"] == str(tmp_path / "cache")
    from nbmerge.codehash import code_fingerprint

    assert mp.code_of(repo, env) == {"nbmerge": str(repo / "nbmerge"), "code_fingerprint": code_fingerprint()}
    other = tmp_path / "other"
    (other / ".venv" / "bin").mkdir(parents=True)
    (other / ".venv" / "bin" / "python").symlink_to(repo / ".venv" / "bin" / "python")
    with pytest.raises(SystemExit, match="not from the checkout"):
        mp.code_of(other, env)  # this .venv imports the project's nbmerge, not other/nbmerge
