"""coqui-tts (MPL-2.0, the maintained fork of Coqui TTS; an optional extra): end-to-end Coqui
models that a team keeps on its own disk, XTTS-v2 cloning a speaker from a recorded sample
(``speaker_wav``) or a single-speaker VITS model.

Install with ``pip install -e '.[coqui]'``. No Coqui model ships in any package: a profile
names local files (``voice: {engine: coqui, voice_id: NAME, model_path: ..., config_path: ...,
speaker_wav: ...}``, paths relative to the profile file) and rig loads them with coqui-tts's
own ``load_config``/``setup_model``/``load_checkpoint``, never through its ``ModelManager`` (the
downloader): nothing is fetched, ``HF_HUB_OFFLINE=1`` is set before coqui-tts is imported, and
a config that names a remote file (``http://``, ``hf://``, ...) is refused.

Layouts (:func:`resolve_files`): ``model_path`` is a checkpoint file (VITS: ``model_file.pth``
or ``model.pth``; XTTS: ``model.pth``) or the folder holding it (``model.pth``,
``model_file.pth``, ``best_model.pth``, in that order); ``config_path`` defaults to
``config.json`` beside the checkpoint; an XTTS folder also holds ``vocab.json``. XTTS needs
``speaker_wav`` (a recording of the speaker, at least about 3 s; rig reads it itself with
soundfile and resamples it with soxr, since torchaudio's loader needs a torchcodec build that
a CPU machine may not load); other models refuse it. torchaudio itself is imported without its
CUDA-only extension (:mod:`rig.torchaudio_cpu`).

Determinism: VITS draws noise in its flow and duration predictor and XTTS samples its GPT;
each :meth:`CoquiEngine.synthesize` call seeds torch's generator first, so a chunk's audio is
a pure function of (text, rate) and repeats of a call share one render. ``rate`` maps to
VITS's ``length_scale / rate`` and to XTTS's ``speed``.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rig.audio import Audio, read_wav
from rig.errors import ConfigError, EngineUnavailable
from rig.torchaudio_cpu import import_torchaudio

_INSTALL_HINT = "pip install -e '.[coqui]'   (coqui-tts==0.28.0 with torchaudio, torchcodec)"
#: Checkpoint names looked for, in order, when ``model_path`` is a folder.
CHECKPOINT_NAMES = ("model.pth", "model_file.pth", "best_model.pth")
#: Models that clone a voice from ``speaker_wav``; every other model refuses it.
CLONING_MODELS = ("xtts",)
#: The config ``model`` values rig speaks: end-to-end models that return a waveform (models
#: that need a separate vocoder, Tacotron, Glow-TTS, FastPitch, ..., are refused).
SUPPORTED_MODELS = ("vits", "xtts")
#: What a config may not point at: rig never downloads.
_REMOTE_PREFIXES = ("http://", "https://", "hf://", "s3://", "gs://", "ftp://")
_COQUI_SEED = 0
#: The language a multilingual model (XTTS) speaks: rig's answer banks are English.
LANGUAGE = "en"
#: XTTS computes its speaker latents at this rate (its ``load_sr``).
_XTTS_LOAD_RATE_HZ = 22050


@dataclass(frozen=True)
class CoquiFiles:
    """The local files of one Coqui voice (absolute paths).

    Attributes:
        checkpoint: the checkpoint file (``*.pth``).
        config: the model's ``config.json``.
        model: the config's ``model`` field (``vits``, ``xtts``, ...).
        speaker_wav: the speaker's recording (XTTS), else None.
    """

    checkpoint: Path
    config: Path
    model: str
    speaker_wav: Path | None


def _remote(node: object) -> str | None:
    """The first string in a JSON tree that names a remote location, else None."""
    if isinstance(node, str):
        return node if node.lower().startswith(_REMOTE_PREFIXES) else None
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for item in items:
        found = _remote(item)
        if found:
            return found
    return None


def resolve_files(model_path: Path, config_path: Path | None, speaker_wav: Path | None,
                  where: object = "voice") -> CoquiFiles:
    """Check a Coqui voice's files and name them; reads only ``config.json`` (no coqui-tts).

    Args:
        model_path: a checkpoint file or the folder holding it (absolute, or relative to the
            working directory: resolve profile paths first).
        config_path: the config, or None for ``config.json`` beside the checkpoint.
        speaker_wav: the speaker's recording, or None.
        where: the file named in the errors (the profile file).

    Raises:
        ConfigError: ``where: voice.<field>: problem (got value)`` when the checkpoint, the
            config or the speaker recording is missing, the config is not JSON or names a
            remote file, an XTTS model has no ``speaker_wav`` or ``vocab.json``, or a model
            that does not clone voices is given one.
    """
    model_path = Path(model_path)
    if model_path.is_dir():
        found = [model_path / n for n in CHECKPOINT_NAMES if (model_path / n).is_file()]
        if not found:
            raise ConfigError(where, "voice.model_path", "no Coqui checkpoint in the folder "
                              f"(looked for {', '.join(CHECKPOINT_NAMES)})", str(model_path))
        checkpoint = found[0]
    elif model_path.is_file():
        checkpoint = model_path
    else:
        raise ConfigError(where, "voice.model_path", "Coqui model not found (paths are "
                          "relative to the profile file; rig never downloads a model)",
                          str(model_path))
    config = Path(config_path) if config_path is not None else checkpoint.parent / "config.json"
    field = "voice.config_path" if config_path is not None else "voice.model_path"
    if not config.is_file():
        raise ConfigError(where, field, "the model's config.json not found" + (
            "" if config_path is not None else " beside the checkpoint (or give config_path)"),
            str(config))
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(where, field, f"not a Coqui config.json ({exc})", str(config)) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("model"), str):
        raise ConfigError(where, field, "a Coqui config.json has a 'model' field (vits, "
                          "xtts, ...)", str(config))
    remote = _remote(raw)
    if remote:
        raise ConfigError(where, field, f"the config names a remote file ({remote}); rig "
                          "never downloads: put the file beside the model and name it there",
                          str(config))
    model = raw["model"].lower()
    if model not in SUPPORTED_MODELS:
        raise ConfigError(where, field, f"a {raw['model']!r} model: rig's coqui engine speaks "
                          f"end-to-end models ({', '.join(SUPPORTED_MODELS)}), not models that "
                          "need a separate vocoder", str(config))
    if model in CLONING_MODELS:
        if speaker_wav is None:
            raise ConfigError(where, "voice.speaker_wav", f"a {model} model clones the voice "
                              "of a recorded sample: give speaker_wav (a WAV of the speaker, "
                              "3 s or more)")
        if not (checkpoint.parent / "vocab.json").is_file():
            raise ConfigError(where, "voice.model_path", f"a {model} model needs vocab.json "
                              "beside its checkpoint", str(checkpoint.parent))
    elif speaker_wav is not None:
        raise ConfigError(where, "voice.speaker_wav", f"a {model} model does not clone "
                          "voices (only XTTS does here); remove speaker_wav", str(speaker_wav))
    if speaker_wav is not None and not Path(speaker_wav).is_file():
        raise ConfigError(where, "voice.speaker_wav", "speaker recording not found (paths "
                          "are relative to the profile file)", str(speaker_wav))
    return CoquiFiles(checkpoint=checkpoint, config=config, model=model,
                      speaker_wav=Path(speaker_wav) if speaker_wav is not None else None)


def _import_coqui():  # -> (load_config, setup_model, version)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        from importlib.metadata import version

        if not import_torchaudio():
            raise ImportError("torchaudio is not installed")

        from TTS.config import load_config
        from TTS.tts.models import setup_model
    except ImportError as exc:
        raise EngineUnavailable(f"the coqui engine is not installed ({exc.__class__.__name__}: "
                                f"{str(exc).strip()[:200]}): {_INSTALL_HINT}") from exc
    return load_config, setup_model, version("coqui-tts")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=4)
def _load(files: CoquiFiles):  # -> (model, config, version string, sample rate)
    import torch

    load_config, setup_model, pkg_version = _import_coqui()
    config = load_config(str(files.config))
    model = setup_model(config=config)
    if files.model in CLONING_MODELS:
        model.load_checkpoint(config, checkpoint_dir=str(files.checkpoint.parent),
                              checkpoint_path=str(files.checkpoint), eval=True)
    else:
        model.load_checkpoint(config, str(files.checkpoint), eval=True)
    model.eval()
    if getattr(model, "num_speakers", 0) > 1 or getattr(model, "use_d_vector_file", False):
        raise EngineUnavailable(f"{files.config}: a multi-speaker {files.model} model; rig's "
                                "coqui engine speaks single-speaker models and XTTS")
    rate_hz = int(config.audio.get("output_sample_rate", None) or config.audio["sample_rate"])
    parts = [f"coqui-tts {pkg_version}", f"{files.model} sha256 {_sha256(files.checkpoint)[:16]}",
             f"config sha256 {_sha256(files.config)[:16]}"]
    if files.speaker_wav is not None:
        parts.append(f"speaker_wav sha256 {_sha256(files.speaker_wav)[:16]}")
    parts.append(f"torch {torch.__version__}; seed {_COQUI_SEED}")
    return model, config, "; ".join(parts), rate_hz


class CoquiEngine:
    """A Coqui TTS model from local files. ``rate``: 1.0 the model's natural pace.

    Args:
        voice_id: the profile's name for the voice (recorded with each call).
        files: the checked files (:func:`resolve_files`).

    Raises:
        EngineUnavailable: coqui-tts (or torch, torchaudio, torchcodec) is not installed (the
            message gives ``pip install -e '.[coqui]'``), or the model is multi-speaker.
    """

    name = "coqui"

    def __init__(self, voice_id: str, files: CoquiFiles) -> None:
        self.voice_id = voice_id
        self.files = files
        self._model, self._config, self.version, self.sample_rate_hz = _load(files)
        self._length_scale = float(getattr(self._model, "length_scale", 1.0))
        self._latents = None

    def _speaker_latents(self):  # -> (gpt_cond_latent, speaker_embedding), XTTS only
        if self._latents is None:
            import torch

            audio = read_wav(self.files.speaker_wav, _XTTS_LOAD_RATE_HZ)
            limit = round(float(self._config.max_ref_len) * _XTTS_LOAD_RATE_HZ)
            wav = torch.from_numpy(np.clip(audio.samples[:limit], -1.0, 1.0)).unsqueeze(0)
            with torch.inference_mode():
                emb = self._model.get_speaker_embedding(wav, _XTTS_LOAD_RATE_HZ)
                gpt = self._model.get_gpt_cond_latents(
                    wav, _XTTS_LOAD_RATE_HZ, length=self._config.gpt_cond_len,
                    chunk_length=self._config.gpt_cond_chunk_len)
            self._latents = (gpt, emb)
        return self._latents

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak ``text``; float32 mono, shape ``(n,)``, at the model's output rate
        (``sample_rate_hz``). Deterministic: torch is seeded before every call."""
        import torch

        torch.manual_seed(_COQUI_SEED)
        with torch.inference_mode():
            if self.files.model in CLONING_MODELS:
                gpt, emb = self._speaker_latents()
                cfg = self._config
                with warnings.catch_warnings():  # coqui-tts 0.28 passes GPT-2 past_key_values,
                    # which transformers 5 deprecates (a FutureWarning on every chunk)
                    warnings.filterwarnings("ignore", ".*past_key_values.*", FutureWarning)
                    out = self._model.inference(
                        text, LANGUAGE, gpt, emb, temperature=cfg.temperature,
                        length_penalty=cfg.length_penalty, top_k=cfg.top_k, top_p=cfg.top_p,
                        repetition_penalty=cfg.repetition_penalty, speed=float(rate))
            else:
                self._model.length_scale = self._length_scale / float(rate)
                out = self._model.synthesize(text)
        wav = out["wav"]
        wav = wav.detach().cpu().numpy() if hasattr(wav, "detach") else wav
        wav = np.asarray(wav, np.float32).reshape(-1)
        if not np.all(np.isfinite(wav)):
            raise ValueError(f"{self.files.checkpoint}: the model returned NaN or inf samples "
                             f"for {text!r}")
        return Audio(np.ascontiguousarray(np.clip(wav, -1.0, 1.0)), self.sample_rate_hz)


def coqui_engine(voice, resolve_path=None) -> CoquiEngine:
    """The engine of a profile's ``voice`` block (``engine: coqui``).

    Args:
        voice: a :class:`rig.profiles.settings.Voice` with ``model_path`` (and optionally
            ``config_path``, ``speaker_wav``).
        resolve_path: maps a path named in the profile to a real one (relative to the profile
            file, :meth:`rig.profiles.loader.ProfileSet.resolve_path`); None: as given.

    Raises:
        ConfigError: a file is missing or wrong (:func:`resolve_files`).
        EngineUnavailable: coqui-tts is not installed.
    """
    def path(rel: str | None) -> Path | None:
        if rel is None:
            return None
        return Path(resolve_path(rel)) if resolve_path is not None else Path(rel)

    if voice.model_path is None:
        raise ConfigError("voice", "voice.model_path", "the coqui engine needs model_path")
    files = resolve_files(path(voice.model_path), path(voice.config_path),
                          path(voice.speaker_wav))
    return _engine(voice.voice_id, files)


@lru_cache(maxsize=4)
def _engine(voice_id: str, files: CoquiFiles) -> CoquiEngine:
    return CoquiEngine(voice_id, files)
