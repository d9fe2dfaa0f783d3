"""The auditor's bundle: one zip of a campaign's record (``rig campaign export``).

A bundle holds, under fixed names (docs/export.md):

* the campaign folder's ``calls.parquet``, ``calls.jsonl``, ``oracle.jsonl`` (when the
  campaign graded anything), ``summary.json``, ``campaign.json``, ``report.html`` and its
  ``audio/`` folder (when the campaign wrote one), and the ``sweep/`` folder its summary
  cites (the timer sweep ``rig demo`` runs);
* ``inputs/pipeline/<file>``, ``inputs/answer_bank/...`` and ``inputs/profiles/...``: the
  pipeline file, the answer bank and the profile set the campaign ran with, copied from the
  paths ``campaign.json`` records, with the files a profile names (a noise recording, a folder
  of recorded answers) under ``inputs/profiles/`` too;
* ``MANIFEST.json``: every other file's sha256 and size in bytes, the rig version (and its
  git commit when run from a clone), the verified sha256 of the models the pipeline names, the
  Python version, the export time (UTC) and how the inputs were checked.

The inputs are checked before anything is written: a campaign run by this rig records the
sha256 of every input file in ``campaign.json`` (``inputs_sha256``, :func:`input_hashes`);
an input that changed, disappeared or appeared since is refused, since the bundle would not
be the record of what ran. An older campaign without that record is checked by its pipeline
version alone (the pipeline file must still hash to ``pipeline_version``), and the manifest
says so (``inputs_verified``).
"""

from __future__ import annotations

import hashlib
import json
import platform
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rig.errors import ConfigError, RigError
from rig.jsonfile import read_json

#: The campaign folder's files a bundle must hold (missing: refused).
REQUIRED = ("calls.parquet", "calls.jsonl", "summary.json", "campaign.json", "report.html")
#: Files the bundle holds when the campaign folder has them.
OPTIONAL = ("oracle.jsonl",)
MANIFEST = "MANIFEST.json"
FORMAT = "rig-campaign-bundle/1"
#: campaign.json's key for the inputs' hashes (bundle name -> sha256).
INPUTS_KEY = "inputs_sha256"
_REL = "; a relative path is read from the current folder, as when the campaign ran"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed entry times: same files, same zip entries


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes (read in chunks)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _folder_files(folder: Path) -> list[Path]:
    """Every regular file under ``folder``, sorted, hidden files and caches left out."""
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not any(part.startswith(".") or part == "__pycache__"
                              for part in p.relative_to(folder).parts))


def input_files(answers_path: str | Path, profiles_path: str | Path,
                pipeline_path: str | Path) -> dict[str, Path]:
    """The files of a campaign's inputs by their name in a bundle (sorted): the pipeline file;
    the answer bank (a single question file, or every file of its folder); the profile set's
    files and the files its profiles name (a noise file, a recorded voice's folder),
    relative to the profile set where they lie in it, else under ``inputs/profiles/_named/``.

    Raises:
        ConfigError: an input is missing, or the profile set does not load.
    """
    from rig.profiles import load_profiles

    answers, profiles, pipeline = Path(answers_path), Path(profiles_path), Path(pipeline_path)
    out: dict[str, Path] = {}
    if not pipeline.is_file():
        raise ConfigError(pipeline, "", "pipeline file not found (campaign.json: "
                          f"pipeline_path{_REL})")
    out[f"inputs/pipeline/{pipeline.name}"] = pipeline
    if answers.is_file():
        out[f"inputs/answer_bank/{answers.name}"] = answers
    elif answers.is_dir():
        out.update({f"inputs/answer_bank/{p.relative_to(answers).as_posix()}": p
                    for p in _folder_files(answers)})
    else:
        raise ConfigError(answers, "", "answer bank not found (campaign.json: "
                          f"answers_path{_REL})")
    if not profiles.is_dir():
        raise ConfigError(profiles, "", "profile set folder not found (campaign.json: "
                          f"profiles_path{_REL})")
    out.update({f"inputs/profiles/{p.relative_to(profiles).as_posix()}": p
                for p in _folder_files(profiles)})
    pset = load_profiles(profiles)
    named: list[Path] = []
    for prof in pset.profiles:
        if prof.noise.kind == "file" and prof.noise.path:
            named.append(pset.resolve_path(prof, prof.noise.path))
        if prof.voice.engine == "recorded":
            named += _folder_files(pset.resolve_path(prof, prof.voice.voice_id))
    root = profiles.resolve()
    for p in named:
        r = p.resolve()
        if r.is_relative_to(root):
            out[f"inputs/profiles/{r.relative_to(root).as_posix()}"] = p
        else:
            tag = hashlib.sha256(str(r.parent).encode()).hexdigest()[:8]
            out[f"inputs/profiles/_named/{tag}/{r.name}"] = p
    return dict(sorted(out.items()))


def input_hashes(answers_path: str | Path, profiles_path: str | Path,
                 pipeline_path: str | Path) -> dict[str, str]:
    """``{bundle name: sha256}`` of :func:`input_files`: what ``campaign.json`` records under
    ``inputs_sha256`` when a campaign starts, and what an export checks."""
    return {k: sha256_file(p) for k, p in
            input_files(answers_path, profiles_path, pipeline_path).items()}


@dataclass(frozen=True)
class Bundle:
    """An export written: the zip's path and its manifest."""
    path: Path
    manifest: dict

    @property
    def n_files(self) -> int:
        return len(self.manifest["files"])

    @property
    def size_bytes(self) -> int:
        return sum(f["size_bytes"] for f in self.manifest["files"])


def _campaign_meta(cdir: Path) -> dict:
    meta_path = cdir / "campaign.json"
    if not cdir.is_dir():
        raise RigError(f"{cdir}: not a folder")
    if not meta_path.is_file():
        raise RigError(f"{cdir}: not a campaign folder (no campaign.json)")
    meta = read_json(meta_path)  # not JSON, a key named twice: ConfigError
    for key in ("campaign_id", "pipeline_version", "answers_path", "profiles_path",
                "pipeline_path"):
        if not isinstance(meta, dict) or not meta.get(key):
            raise ConfigError(meta_path, key, "missing: not a campaign.json rig wrote")
    return meta


def _check_inputs(meta: dict, meta_path: Path, files: dict[str, Path]) -> str:
    """Refuse inputs that changed since the campaign ran; returns how they were checked."""
    recorded = meta.get(INPUTS_KEY)
    if isinstance(recorded, dict):
        for name in sorted(set(recorded) - set(files)):
            raise ConfigError(meta_path, f"{INPUTS_KEY}.{name}", "input file recorded when the "
                              "campaign ran is gone; the bundle would not be the record of "
                              "this campaign")
        for name in sorted(set(files) - set(recorded)):
            raise ConfigError(files[name], "", "input file added since the campaign ran (not "
                              f"in campaign.json's {INPUTS_KEY}); the bundle would not be the "
                              "record of this campaign")
        for name, path in files.items():
            now = sha256_file(path)
            if now != recorded[name]:
                raise ConfigError(path, "", "changed since the campaign ran: sha256 "
                                  f"{now[:12]}... is not the recorded {recorded[name][:12]}...; "
                                  "restore the file or run a new campaign", None)
        return "sha256"
    from rig.pipeline import load_pipeline, pipeline_version

    path = Path(meta["pipeline_path"])
    now = pipeline_version(load_pipeline(path))
    if now != meta["pipeline_version"]:
        raise ConfigError(path, "", "changed since the campaign ran: its pipeline version is "
                          f"{now}, the campaign's {meta['pipeline_version']}")
    return "pipeline_version"


def campaign_files(cdir: Path) -> dict[str, Path]:
    """The campaign folder's files a bundle holds, by name in the bundle.

    Raises:
        ConfigError: a required file (:data:`REQUIRED`) is missing.
    """
    out: dict[str, Path] = {}
    for name in REQUIRED:
        if not (cdir / name).is_file():
            raise ConfigError(cdir / name, "", "missing: an export needs it (rig campaign "
                              "summarize writes calls.parquet, summary.json and report.html "
                              "from the call log)")
        out[name] = cdir / name
    out.update({n: cdir / n for n in OPTIONAL if (cdir / n).is_file()})
    partial = (".tmp", ".part", ".partial")  # an atomic write's temporary file
    folders = [cdir / "audio"]
    sweep = (read_json(cdir / "summary.json").get("sweep")
             or {}).get("report")
    if sweep:  # the sweep `rig demo` ran, which the summary and the report cite
        folders.append((cdir / sweep).parent)
    for folder in folders:
        if folder.is_dir() and folder.resolve().is_relative_to(cdir.resolve()) \
                and folder.resolve() != cdir.resolve():
            out.update({p.relative_to(cdir).as_posix(): p for p in _folder_files(folder)
                        if not p.name.endswith(partial)})
    return out


def rig_source() -> dict:
    """The rig that writes the bundle: ``{"version", "git_commit", "git_dirty"}``; the commit
    (and whether tracked files differ from it) when rig runs from a git clone, else None."""
    import subprocess

    import rig

    out = {"version": rig.__version__, "git_commit": None, "git_dirty": None}
    repo = Path(rig.__file__).resolve().parents[1]
    if not (repo / ".git").exists():
        return out
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        diff = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                               "--untracked-files=no"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return out
    if head.returncode == 0:
        out["git_commit"] = head.stdout.strip()
        out["git_dirty"] = bool(diff.stdout.strip()) if diff.returncode == 0 else None
    return out


def model_hashes(pipeline: dict) -> dict:
    """The verified sha256 of the embedded models the campaign's pipeline names
    (:data:`rig.models.MODELS`; the pipeline_version pins the names, these the bytes):
    ``{"asr": {"name", "sha256"}, "scorer": {...}}``; a scorer served from an endpoint
    (``backend: openai``) is named with ``sha256`` None: rig cannot see its weights."""
    from rig.models import MODELS

    out = {}
    for role in ("asr", "scorer"):
        name = ((pipeline or {}).get(role) or {}).get("model")
        if name:
            spec = MODELS.get(name)
            out[role] = {"name": name, "sha256": spec.sha256 if spec else None}
    return out


def export_campaign(campaign_dir: str | Path, out_zip: str | Path,
                    now: datetime | None = None) -> Bundle:
    """Write the bundle of the campaign in ``campaign_dir`` to ``out_zip`` (module docstring).

    Entries are in sorted order, ``MANIFEST.json`` last, each with a fixed time; the zip is
    written to a temporary name and renamed, so a reader never sees half a bundle.

    Raises:
        RigError: ``campaign_dir`` is not a campaign folder (no ``campaign.json``).
        ConfigError: a required file or an input is missing, or an input changed since the
            campaign ran (names the file).
    """
    cdir = Path(campaign_dir)
    meta = _campaign_meta(cdir)
    files = campaign_files(cdir)
    inputs = input_files(meta["answers_path"], meta["profiles_path"], meta["pipeline_path"])
    verified = _check_inputs(meta, cdir / "campaign.json", inputs)
    files.update(inputs)
    out = Path(out_zip)
    if out.suffix != ".zip":
        raise ConfigError(out, "", "the bundle's name must end in .zip")
    out_r = out.resolve()
    files = {k: p for k, p in sorted(files.items()) if p.resolve() != out_r}
    listing, source = [], rig_source()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, path in files.items():
                data = path.read_bytes()
                listing.append({"path": name, "sha256": hashlib.sha256(data).hexdigest(),
                                "size_bytes": len(data)})
                zf.writestr(zipfile.ZipInfo(name, _ZIP_TIME), data,
                            compress_type=(zipfile.ZIP_STORED if name.endswith(".flac")
                                           else zipfile.ZIP_DEFLATED))
            manifest = {
                "format": FORMAT, "campaign_id": meta["campaign_id"],
                "pipeline_version": meta["pipeline_version"], "rig_version": source["version"],
                "rig_source": source, "models": model_hashes(meta.get("pipeline")),
                "python_version": platform.python_version(),
                "exported_at": (now or datetime.now(UTC)).astimezone(UTC).isoformat(
                    timespec="seconds").replace("+00:00", "Z"),
                "inputs_verified": verified,
                "sources": {k: meta[k] for k in ("answers_path", "profiles_path",
                                                 "pipeline_path")},
                "files": listing}
            zf.writestr(zipfile.ZipInfo(MANIFEST, _ZIP_TIME),
                        json.dumps(manifest, indent=2) + "\n")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return Bundle(out, manifest)
