"""The drill-down of a small real campaign (hibari TTS, 8 kHz mu-law line, Silero VAD with the
800 ms timer, faster-whisper tiny.en, llama.cpp Qwen2.5-Coder-1.5B), opened in headless
Chromium from ``file://`` as a reader would: no console errors, every audio element loads
with a duration, a truncated call's drill-down shows the lost words struck through and the
aligned transcript, and the truncated filter hides the calls it should. A screenshot of the
opened drill-down is written under the test's folder (its path is printed)."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from rig.drilldown.audio import audio_paths

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def campaign(small_real_campaign):
    """conftest's shared campaign: 2 answers x (baseline, long_pauses, short_pauses)."""
    return small_real_campaign, pd.read_parquet(small_real_campaign / "calls.parquet")


def test_every_call_wrote_its_audio(campaign):
    out, df = campaign
    assert (df["status"] == "ok").all(), df["error"].tolist()
    for r in df.itertuples():
        p = audio_paths(out / "audio", r.call_id)
        assert all(f.is_file() for f in p.values())
        rec = json.loads(p["json"].read_text())
        assert rec["turn_close_s"] == pytest.approx(r.turn_close_s)
        lost = [w for w in rec["words"] if w["after_turn_close"] and not w["is_filler"]]
        assert len(lost) == r.words_lost
        assert rec["line_sample_rate_hz"] == 8000 and max(rec["line_peaks"]) > 0.01


def test_report_drilldown_in_chromium(campaign, tmp_path):
    from browser import audio_durations, chromium, console_errors, open_page, screenshot
    from selenium.webdriver.common.by import By

    out, df = campaign
    n_entries = 4  # 2 answers x (long_pauses, short_pauses), each beside its baseline call
    with chromium() as driver:
        assert open_page(driver, out / "report.html") == []
        items = driver.find_elements(By.CSS_SELECTOR, "#calls details.dd-call")
        assert len(items) == n_entries
        audio = audio_durations(driver)
        assert len(audio) == n_entries * 2 * 2  # caller and line, baseline and profile
        assert all(a["error"] is None and (a["duration_s"] or 0) > 0 for a in audio), audio

        # a truncated call: open it; the lost words are struck, the transcript aligned
        trunc = driver.find_element(By.CSS_SELECTOR,
                                    "#calls details.dd-call[data-truncated='1']")
        trunc.find_element(By.TAG_NAME, "summary").click()
        panel = trunc.find_elements(By.CSS_SELECTOR, ".dd-panel")[1]  # the profile's
        struck = [e for e in panel.find_elements(By.CSS_SELECTOR, "del.dd-lost")
                  if e.is_displayed()
                  and not e.find_elements(By.CSS_SELECTOR, ".dd-filler")]
        cid = panel.find_element(By.TAG_NAME, "code").text
        row = df.set_index("call_id").loc[cid]
        assert row["truncated"] and len(struck) == row["words_lost"] > 0
        assert "Transcript, aligned:" in panel.text
        assert panel.find_elements(By.CSS_SELECTOR, ".dd-d sup.dd-mark")  # deletions marked
        assert panel.find_element(By.CSS_SELECTOR, "svg.dd-wave").is_displayed()
        shot = screenshot(driver, tmp_path / "drilldown.png")
        print(f"screenshot: {shot}")

        # the truncated filter hides the short pauses' calls (none truncated)
        driver.find_element(By.ID, "dd-truncated").click()
        shown = [e.get_attribute("data-profile") for e in items if e.is_displayed()]
        assert shown == ["long_pauses", "long_pauses"]
        assert driver.find_element(By.ID, "dd-count").text == f"2 of {n_entries} shown"
        assert console_errors(driver) == []


def test_the_real_campaign_exports_to_a_bundle_whose_hashes_match(campaign, tmp_path):
    import hashlib
    import zipfile

    from rig.campaign.export import MANIFEST, export_campaign

    out, df = campaign
    bundle = export_campaign(out, tmp_path / "bundle.zip")
    with zipfile.ZipFile(bundle.path) as zf:
        zf.extractall(tmp_path / "x")
        names = zf.namelist()
    man = json.loads((tmp_path / "x" / MANIFEST).read_text())
    listed = {f["path"]: f for f in man["files"]}
    assert set(names) == {*listed, MANIFEST}
    for path, f in listed.items():
        data = (tmp_path / "x" / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"], path
    for cid in df["call_id"]:  # every call's audio, as the report links it
        assert {f"audio/{cid}.caller.flac", f"audio/{cid}.line.flac"} <= set(listed)
    assert "report.html" in listed and "inputs/pipeline/reference.yaml" in listed
