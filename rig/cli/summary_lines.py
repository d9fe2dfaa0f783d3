"""The console lines of a finished campaign (``rig campaign run|summarize`` and ``rig demo``):
the per-profile table and the sentences under it, read from the typed
:class:`rig.campaign.schema.CampaignSummary`."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from rig.campaign.schema import CampaignSummary, JudgeValidity
from rig.cli.common import console
from rig.console import print_table, stdout_console


def print_read_speech(summary: CampaignSummary, out: Path) -> None:
    """A read-speech campaign's lines: one per speaker group and per speaker."""
    from rig.report.read_speech import figures_sentence, n_speakers_text

    rs = summary.read_speech
    for g, d in (rs.by_group if rs else {}).items():
        stdout_console().print(figures_sentence(f"group {g} ({n_speakers_text(d)})", d),
                               markup=False, highlight=False)
    for s, d in (rs.by_speaker if rs else {}).items():
        stdout_console().print(figures_sentence(f"{s} ({d.group})", d), markup=False,
                               highlight=False)
    stdout_console().print(f"read-speech bank: no scorer ran; wrote {out}/calls.parquet, "
                           f"{out}/summary.json, {out}/report.html")


def print_summary(summary: CampaignSummary, out: Path) -> None:
    """The campaign's lines on the console: the per-profile table, too few pairs, the stage
    split, suspect rates, the judge's validity, the noise floor, where the files are."""
    if summary.mode == "read_speech":  # rig.campaign.read_speech
        print_read_speech(summary, out)
        return
    from rig.stats.few_pairs import few_pairs_text, too_few_pairs  # rig.stats needs scipy

    t = Table(title=f"{summary.campaign_id} ({summary.pipeline_version})",
              caption="mean delta and its CIs: points on the rubric's 0-100 scale, profile "
                      "minus baseline; flip rate, truncation: shares of calls (0-1)")
    for col in ("profile", "pairs", "mean delta", "95% CI (bootstrap)", "95% CI (t)",
                "flip rate", "WER mean", "WER pooled", "content sim.", "truncation"):
        t.add_column(col, justify="right" if col != "profile" else "left", no_wrap=True)

    def f(v, d=2):
        return "n/a" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))

    for pid, d in summary.profiles.items():
        ci, tci = d.ci95, d.t_ci95
        few = too_few_pairs(d)  # the interval is unreadable: the line below says what is needed
        t.add_row(pid, f(d.n_pairs), f(d.mean_delta),
                  "too few pairs" if few else f"[{f(ci[0])}, {f(ci[1])}]" if ci else "n/a",
                  "too few pairs" if few else f"[{f(tci[0])}, {f(tci[1])}]" if tci else "n/a",
                  f(d.flip_rate, 3),
                  f(d.wer_mean, 3), f(d.wer_pooled, 3), f(d.content_similarity_mean, 3),
                  f(d.truncation_rate, 3))
    print_table(t, min_width=150)
    for pid, d in summary.profiles.items():
        if too_few_pairs(d):
            console.print(Text(f"warning: {pid}: {few_pairs_text(d)}", style="yellow"),
                          highlight=False, soft_wrap=True)
    from rig.report.verdict import flip_direction_words

    for pid, d in summary.profiles.items():  # rig.stats.flip_direction
        fd = d.flip_direction
        if fd is not None and fd.n_flips:
            stdout_console().print(f"{pid}: {fd.n_flips} of {fd.n_pairs} decisions flip: "
                                   f"{flip_direction_words(fd)}", markup=False,
                                   highlight=False)
    from rig.campaign.attribution import split_text

    for pid, d in summary.profiles.items():
        split = split_text(d.attribution, n_pairs=d.n_pairs)
        if split:  # "long_pauses: -45 = -44 turn detection, -1 ASR, 0 rest"
            stdout_console().print(f"{pid}: {split}", markup=False, highlight=False)
    for pid, d in summary.profiles.items():  # rig.asr.checks: flagged, not scored as normal
        a, tr = d.asr_suspect_rate, d.turn_suspect_rate
        if a or tr:
            stdout_console().print(f"{pid}: suspect ASR on {f(a, 3)}, suspect turns on "
                                   f"{f(tr, 3)} of calls (reasons in calls.parquet)",
                                   markup=False, highlight=False)
    for pid, d in summary.profiles.items():  # rig.campaign.faults: named, and what they left
        kinds = {k: n for k, n in (d.faults or {}).items() if n}
        if kinds:
            line = f"{pid}: faults: " + ", ".join(f"{k} {n}" for k, n in kinds.items())
            if d.n_excluded:
                line += f"; {d.n_excluded} kept out of {d.excluded_from or 'the scores'}"
            stdout_console().print(line, markup=False, highlight=False)
    v = summary.judge_validity
    if isinstance(v, JudgeValidity) and v.verdict in ("adequate", "low"):
        line = (f"judge validity on this campaign's {v.n_answers} answers ({v.scoring_mode}): "
                f"Spearman {f(v.spearman)}, decision agreement "
                f"{f(v.decision_agreement)}: {v.verdict}")
        if v.verdict == "low":
            line += " (the deltas say more about the judge than about the audio path)"
        stdout_console().print(line, markup=False, highlight=False)
    elif isinstance(v, JudgeValidity) and v.not_computable.get("verdict"):
        stdout_console().print(f"judge validity: no verdict, {v.not_computable['verdict']}",
                               markup=False, highlight=False)
    if summary.judge_validity_bank is not None:
        from rig.scorer.bank_validity import bank_sentence

        stdout_console().print(f"judge validity: {bank_sentence(summary.judge_validity_bank)}",
                               markup=False, highlight=False)
    nf = summary.noise_floor
    if nf is not None and nf.measured is False:
        stdout_console().print(f"noise floor: {nf.reason}", markup=False,
                               highlight=False)
    elif nf is not None and nf.repeat_sd is not None:
        stdout_console().print(noise_floor_line(nf), markup=False, highlight=False)
    if summary.content_similarity_note:
        console.print(Text(summary.content_similarity_note), highlight=False)
    stdout_console().print(f"wrote {out}/calls.parquet, {out}/summary.json, {out}/report.html")


def noise_floor_line(nf) -> str:
    """The console's line for a measured noise floor (:class:`rig.campaign.schema.
    NoiseFloorSummary`): one call's repeat SD in points, the pairs it rests on, the flips."""
    differ = nf.n_repeat_pairs - nf.n_identical_repeat_pairs
    line = (f"noise floor ({nf.profile_id}): one call's score moves by SD {nf.repeat_sd:.2f} "
            f"points (0-100 scale) between repeats (a difference of two repeats: SD "
            f"{nf.sd_repeat_diff:.2f}), from {nf.n_repeat_pairs} repeat pairs of "
            f"{nf.n_answers} answers, {nf.n_identical_repeat_pairs} identical; decisions "
            f"flipped in {nf.n_flips} of {nf.n_repeat_pairs}")
    if differ < 3:
        line += (f"; only {differ} pair(s) differed, so this is a rough figure (more answers "
                 "or repeats narrow it)")
    return line
