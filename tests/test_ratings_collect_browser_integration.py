"""``rig ratings collect`` in headless Chromium on a real campaign (the session's
small_real_campaign: hibari TTS, the 8 kHz mu-law line, Silero VAD, faster-whisper tiny.en,
the llama.cpp judge; 2 answers under the baseline, long_pauses and short_pauses).

The folder is copied (the fixture's folder is shared). The server draws 2 calls per profile
(6), half of them double-rated; rater ann grades all six in one browser session (one flagged
"could not hear"), the server is stopped and started again (the sample and the progress come
back from the folder), rater bob grades what is left for him (the three double items), and
ann then finds nothing left. The page never shows a call id, a profile, a pipeline version or
a judge score; the audio it plays is the line audio cut at the turn close. Then ``rig
campaign summarize`` turns the ratings into ``human_ratings`` with an inter-rater ceiling.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from browser import chromium, need_chromium, screenshot

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@contextmanager
def _server(folder: Path, log_path: Path):
    port = _free_port()
    log = log_path.open("a")
    proc = subprocess.Popen([sys.executable, "-m", "rig.cli", "ratings", "collect", str(folder),
                             "--per-stratum", "2", "--double-share", "0.5", "--seed", "7",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            env=_env())
    try:
        end = time.monotonic() + 120
        while log_path.read_text().count("rating page for") < _server.starts + 1:
            assert proc.poll() is None and time.monotonic() < end, log_path.read_text()
            time.sleep(0.2)
        _server.starts += 1
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


_server.starts = 0


def _wait(driver, js: str, timeout_s: float = 60.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = driver.execute_script("return " + js)
        if value:
            return value
        time.sleep(0.1)
    shown = driver.execute_script("return document.getElementById('status').textContent")
    raise AssertionError(f"not true within {timeout_s} s: {js} (status: {shown!r})")


_DURATION_JS = """
const done = arguments[0], p = document.getElementById('player');
if (p.readyState >= 1) done(p.duration);
else p.addEventListener('loadedmetadata', () => done(p.duration), {once: true});
"""


def _rate_all(driver, url: str, rater: str, level_of, cnh_first: bool = False) -> list[dict]:
    """Open the page as ``rater`` and grade until nothing is left; per item the position,
    the audio's duration and the page's text."""
    driver.get(url)
    _wait(driver, "document.body.dataset.ready === '1'")
    box = driver.find_element("id", "rater")
    box.clear()
    box.send_keys(rater)
    driver.find_element("id", "start").click()
    seen = []
    while True:
        _wait(driver, "!document.getElementById('rate').classList.contains('hidden') || "
                      "!document.getElementById('done').classList.contains('hidden')")
        if driver.execute_script(
                "return !document.getElementById('done').classList.contains('hidden')"):
            return seen
        pos = int(driver.execute_script("return document.body.dataset.position"))
        _wait(driver, f"document.getElementById('player').dataset.loaded === '{pos}'")
        driver.set_script_timeout(30)
        dur = driver.execute_async_script(_DURATION_JS)
        seen.append({"position": pos, "duration_s": dur,
                     "text": driver.find_element("tag name", "body").text})
        if cnh_first and len(seen) == 1:
            driver.find_element("id", "cnh").click()
        else:
            for fs in driver.find_elements("css selector", "#criteria fieldset"):
                cid = fs.get_attribute("data-criterion")
                driver.find_element("id", f"lv-{cid}-{level_of(pos, cid)}").click()
        driver.find_element("id", "submit").click()
        _wait(driver, f"document.getElementById('status').textContent === 'saved call {pos}'"
                      f" || document.getElementById('status').textContent === "
                      f"'saved call {pos} (could not hear)'")
        # the page then loads the next item: wait for it (or the end), so the next round
        # never reads this item's position and player again before the page replaced them
        _wait(driver, f"document.body.dataset.position !== '{pos}' || "
                      "!document.getElementById('done').classList.contains('hidden')")


@pytest.fixture(scope="module")
def collected(small_real_campaign, tmp_path_factory):
    need_chromium()
    tmp = tmp_path_factory.mktemp("collect")
    folder = tmp / "camp"
    shutil.copytree(small_real_campaign, folder)
    log = tmp / "server.log"
    log.write_text("")
    facts: dict = {}
    with _server(folder, log) as url, chromium() as d:
        facts["ann"] = _rate_all(d, url, "ann", lambda p, c: (p + len(c)) % 5, cnh_first=True)
        screenshot(d, tmp / "rate_done.png")
        facts["errors_ann"] = [e["message"] for e in d.get_log("browser")
                               if e.get("level") == "SEVERE"]
    with _server(folder, log) as url, chromium() as d:  # a restart: same sample, progress kept
        facts["bob"] = _rate_all(d, url, "bob", lambda p, c: (p + len(c) + 1) % 5)
        facts["ann_again"] = _rate_all(d, url, "ann", lambda p, c: 0)
        facts["done_text"] = d.find_element("id", "donemsg").text
    return folder, facts


def test_raters_grade_a_blind_stratified_sample(collected):
    from rig.campaign.store import CallLog
    from rig.ratings.model import read_ratings
    from rig.ratings.sample import SAMPLE_FILE, RatingSample

    folder, facts = collected
    sample = RatingSample.model_validate_json((folder / SAMPLE_FILE).read_text())
    rows = {r["call_id"]: r for r in CallLog(folder / "calls.jsonl").rows()}
    assert len(sample.items) == 6
    assert sorted(rows[it.unit_id]["profile_id"] for it in sample.items) == [
        "baseline", "baseline", "long_pauses", "long_pauses", "short_pauses", "short_pauses"]
    doubles = {it.unit_id for it in sample.items if it.double}
    assert len(doubles) == 3
    assert [s["position"] for s in facts["ann"]] == [1, 2, 3, 4, 5, 6]
    assert facts["ann_again"] == [] and "Nothing left for ann" in facts["done_text"]
    assert facts["errors_ann"] == []
    # blind: no call id, profile, pipeline version or judge score on the page
    secrets = {*rows, "baseline", "long_pauses", "short_pauses", "pipeline",
               *(str(round(r["score"], 1)) for r in rows.values() if r.get("score"))}
    for s in facts["ann"] + facts["bob"]:
        for word in secrets:
            assert word not in s["text"], (word, s["position"])
    # the audio is what the interviewer heard, up to the turn close
    for s in facts["ann"]:
        cid = sample.items[s["position"] - 1].unit_id
        close = json.loads((folder / "audio" / f"{cid}.json").read_text())["turn_close_s"]
        assert s["duration_s"] == pytest.approx(close, abs=0.01), cid

    ratings = read_ratings(folder)
    by_rater: dict[str, list] = {}
    for r in ratings:
        by_rater.setdefault(r.rater_id, []).append(r)
    assert len(by_rater["ann"]) == 6
    assert {r.unit_id for r in by_rater["bob"]} == doubles
    first = sample.items[0].unit_id
    cnh = [r for r in ratings if r.could_not_hear]
    assert [(r.rater_id, r.unit_id, r.score) for r in cnh] == [("ann", first, None)]
    for r in ratings:
        assert r.unit_kind == "call" and r.source == "collect" and r.rated_at
        assert r.answer_id == rows[r.unit_id]["answer_id"]
        assert r.question_id == rows[r.unit_id]["question_id"]
        if not r.could_not_hear:
            pos = next(i for i, it in enumerate(sample.items, 1) if it.unit_id == r.unit_id)
            shift = 0 if r.rater_id == "ann" else 1
            assert r.levels == {c: (pos + len(c) + shift) % 5 for c in r.levels}
            assert r.score == pytest.approx(sum(r.points.values()))


def test_summary_takes_the_collected_ratings(collected):
    from rig.ratings.sample import SAMPLE_FILE, RatingSample

    folder, _ = collected
    sample = RatingSample.model_validate_json((folder / SAMPLE_FILE).read_text())
    cnh_double = sample.items[0].double  # ann could not hear the first; bob rated it if double
    run = subprocess.run([sys.executable, "-m", "rig.cli", "campaign", "summarize",
                          str(folder), "--n-boot", "200"], capture_output=True, text=True,
                         env=_env(), timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    s = json.loads((folder / "summary.json").read_text())
    h = s["human_ratings"]
    assert h["n_ratings"] == 9 and h["n_raters"] == 2 and h["n_could_not_hear"] == 1
    assert h["n_calls_rated"] == (6 if cnh_double else 5)
    assert h["inter_rater"] is not None
    assert h["inter_rater"]["n_units"] == (2 if cnh_double else 3)
    assert set(h["by_profile"]) == {"baseline", "long_pauses", "short_pauses"}
    assert "Against human ratings" in (folder / "report.html").read_text()
