"""``rig campaign export``: a campaign run with fake stages, exported, unzipped; every file's
hash matches the manifest, the manifest lists every file, and changed inputs are refused."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from executor_fakes import make_stages
from typer.testing import CliRunner

from rig.campaign.export import INPUTS_KEY, MANIFEST, export_campaign
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.cli import app
from rig.errors import ConfigError, RigError

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """A two-profile campaign whose inputs are copies (so a test may change them)."""
    base = tmp_path_factory.mktemp("export")
    shutil.copytree(ROOT / "answer_bank" / "mini", base / "bank")
    shutil.copytree(ROOT / "profiles" / "demo", base / "profiles")
    shutil.copy(ROOT / "pipelines" / "reference.yaml", base / "pipeline.yaml")
    spec = CampaignSpec(answers_path=base / "bank", profiles_path=base / "profiles",
                        pipeline_path=base / "pipeline.yaml", out_dir=base / "c", repeats=1,
                        profile_ids=("long_pauses",), question_ids=("q01_conflict",),
                        n_boot=200)
    run_campaign(spec, stages=make_stages(), progress=False)  # writes audio/ (rig.drilldown)
    return base


def _unzip(path: Path, into: Path) -> tuple[list[str], dict]:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        zf.extractall(into)
    return names, json.loads((into / MANIFEST).read_text())


def test_bundle_unpacks_to_files_whose_hashes_match(campaign, tmp_path):
    meta = json.loads((campaign / "c" / "campaign.json").read_text())
    assert "inputs/pipeline/pipeline.yaml" in meta[INPUTS_KEY]
    b = export_campaign(campaign / "c", tmp_path / "bundle.zip")
    names, man = _unzip(b.path, tmp_path / "x")
    listed = [f["path"] for f in man["files"]]
    assert names == [*listed, MANIFEST] and listed == sorted(listed)
    on_disk = sorted(p.relative_to(tmp_path / "x").as_posix()
                     for p in (tmp_path / "x").rglob("*") if p.is_file())
    assert on_disk == sorted(names)
    for f in man["files"]:
        data = (tmp_path / "x" / f["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["size_bytes"]
    call_ids = [json.loads(line)["call_id"]
                for line in (campaign / "c" / "calls.jsonl").read_text().splitlines()]
    assert call_ids
    for cid in call_ids:  # every call's audio and word timings
        for kind in ("caller.flac", "line.flac", "json"):
            assert f"audio/{cid}.{kind}" in listed, (cid, kind)
    for need in ("calls.parquet", "calls.jsonl", "oracle.jsonl", "summary.json",
                 "campaign.json", "report.html",
                 "inputs/pipeline/pipeline.yaml", "inputs/answer_bank/bank.yaml",
                 "inputs/answer_bank/q01_conflict.yaml", "inputs/profiles/baseline.yaml",
                 "inputs/profiles/long_pauses.yaml"):
        assert need in listed, need
    assert man["inputs_verified"] == "sha256" and man["rig_version"]
    # the rig that wrote it (its commit when run from a clone, as here) and the models' bytes
    import rig
    from rig.models import MODELS

    assert man["rig_source"]["version"] == man["rig_version"]
    clone = (Path(rig.__file__).resolve().parents[1] / ".git").exists() and bool(
        shutil.which("git"))
    assert (len(man["rig_source"]["git_commit"] or "") == 40) == clone
    assert man["models"]["asr"] == {"name": "whisper-tiny.en",
                                    "sha256": MODELS["whisper-tiny.en"].sha256}
    assert man["models"]["scorer"]["sha256"] == MODELS[man["models"]["scorer"]["name"]].sha256
    assert man["python_version"].count(".") == 2 and man["exported_at"].endswith("Z")
    assert man["campaign_id"] == meta["campaign_id"]
    # the same campaign exported again: the same entries in the same order, same bytes
    again = export_campaign(campaign / "c", tmp_path / "again.zip")
    assert [f["sha256"] for f in again.manifest["files"]] == [f["sha256"] for f in man["files"]]


def test_a_changed_input_is_refused_and_the_cli_says_so_in_one_line(campaign, tmp_path):
    prof = campaign / "profiles" / "long_pauses.yaml"
    text = prof.read_text()
    try:
        prof.write_text(text + "\n# edited after the run\n")
        with pytest.raises(ConfigError, match=r"long_pauses\.yaml: changed since the "
                                              r"campaign ran"):
            export_campaign(campaign / "c", tmp_path / "b.zip")
        res = CliRunner().invoke(app, ["campaign", "export", str(campaign / "c"), "--out",
                                       str(tmp_path / "b.zip")])
        assert res.exit_code == 2, res.output
        assert "changed since the campaign ran" in res.output
        assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
        assert not (tmp_path / "b.zip").exists()
    finally:
        prof.write_text(text)
    prof.rename(prof.with_suffix(".bak"))
    try:
        with pytest.raises(ConfigError, match=r"inputs_sha256\.inputs/profiles/long_pauses\.yaml"
                                              r": input file recorded when the campaign ran is "
                                              r"gone"):
            export_campaign(campaign / "c", tmp_path / "b.zip")
    finally:
        prof.with_suffix(".bak").rename(prof)
    extra = campaign / "profiles" / "added.yaml"
    extra.write_text("profile_id: added\nnoise: {kind: pink, snr_db: 5.0}\n")
    try:
        with pytest.raises(ConfigError, match="added since the campaign ran"):
            export_campaign(campaign / "c", tmp_path / "b.zip")
    finally:
        extra.unlink()


def test_not_a_campaign_or_a_missing_file_exits_2(campaign, tmp_path):
    with pytest.raises(RigError, match="not a campaign folder"):
        export_campaign(tmp_path, tmp_path / "b.zip")
    shutil.copytree(campaign / "c", tmp_path / "c")
    (tmp_path / "c" / "summary.json").unlink()
    res = CliRunner().invoke(app, ["campaign", "export", str(tmp_path / "c"), "--out",
                                   str(tmp_path / "b.zip")])
    assert res.exit_code == 2 and "summary.json: missing" in res.output
    assert "Traceback" not in res.output
    res = CliRunner().invoke(app, ["campaign", "export", str(campaign / "c"), "--out",
                                   str(tmp_path / "ok.zip")])
    assert res.exit_code == 0, res.output
    assert "MANIFEST.json" in res.output and (tmp_path / "ok.zip").is_file()


def test_an_older_campaign_is_checked_by_its_pipeline_version(campaign, tmp_path):
    shutil.copytree(campaign / "c", tmp_path / "c")
    meta = json.loads((tmp_path / "c" / "campaign.json").read_text())
    del meta[INPUTS_KEY]
    (tmp_path / "c" / "campaign.json").write_text(json.dumps(meta))
    b = export_campaign(tmp_path / "c", tmp_path / "b.zip")
    assert b.manifest["inputs_verified"] == "pipeline_version"
    meta["pipeline_version"] = "reference-000000"
    (tmp_path / "c" / "campaign.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="pipeline version"):
        export_campaign(tmp_path / "c", tmp_path / "b.zip")


def test_the_demos_sweep_that_the_summary_cites_is_in_the_bundle(campaign, tmp_path):
    c = tmp_path / "c"
    shutil.copytree(campaign / "c", c)
    (c / "sweep").mkdir()
    (c / "sweep" / "sweep.json").write_text('{"table": []}')
    (c / "sweep" / "report.html").write_text("<html></html>")
    (c / "sweep" / ".report.html.x.partial").write_text("half")  # a write in progress
    (c / "elsewhere").mkdir()
    (c / "elsewhere" / "notes.txt").write_text("not cited")
    summary = json.loads((c / "summary.json").read_text())
    summary["sweep"] = {"vary": "endpointing.silence_timeout_ms=2000",
                        "profile_id": "long_pauses", "verdict": "closes",
                        "report": "sweep/report.html"}
    (c / "summary.json").write_text(json.dumps(summary))
    listed = [f["path"] for f in export_campaign(c, tmp_path / "b.zip").manifest["files"]]
    assert {"sweep/sweep.json", "sweep/report.html"} <= set(listed)
    assert not any(p.endswith(".partial") or p.startswith("elsewhere/") for p in listed)
