"""The campaign report's detailed tables: one row per profile, real ``<th scope>`` headers,
each column's meaning and unit on hover (``<abbr title>``) and in the legend below them
(which prints). The columns come in :data:`GROUPS`, one table each, so that no table needs
to scroll sideways on a 1280 px screen; a profile name too long for its cell is cut with an
ellipsis, the whole name in the cell's ``title``."""

from __future__ import annotations

import html

from rig.campaign.schema import CampaignSummary, ProfileSummary
from rig.report.pages import fmt as _fmt
from rig.report.pages import name_cell

#: (summary key, header, decimals, help: what it is and its unit). Definitions:
#: rig.campaign.schema.ProfileSummary.
COLUMNS: tuple[tuple[str, str, int, str], ...] = (
    ("n_pairs", "pairs", 0, "answers scored under this profile and the baseline (count)"),
    ("mean_delta", "mean delta", 2, "mean over answers of profile score - baseline score, "
     "repeats averaged first (points, 0-100 scale)"),
    ("ci95", "95% CI (bootstrap)", 2, "percentile bootstrap 95% interval of the mean delta "
     "(points); runs narrow below 30 pairs"),
    ("t_ci95", "95% CI (t)", 2, "Student t 95% interval of the mean delta (points)"),
    ("flip_rate", "flip rate", 3, "share of answers whose advance/reject decision differs "
     "from the baseline's (0-1)"),
    ("tier_inversion_rate", "tier inversion", 3, "share of (weak, strong) answer pairs of a "
     "question where the weak one under the baseline outscores the strong one here (0-1)"),
    ("wer_mean", "WER", 3, "mean word error rate of the transcript against the full script "
     "(0-1)"),
    ("wer_pooled", "WER pooled", 3, "pooled word error rate: all errors over all words of "
     "the scripts (0-1); a short answer weighs by its words, not as one call"),
    ("wer_spoken_mean", "WER (spoken part)", 3, "mean word error rate against the words "
     "spoken before the turn closed (0-1): the ASR's own errors"),
    ("wer_spoken_pooled", "WER pooled (spoken part)", 3, "pooled word error rate against the "
     "words spoken before the turn closed (0-1)"),
    ("content_similarity_mean", "content similarity", 3, "mean cosine similarity of "
     "transcript and script sentence embeddings (all-MiniLM-L6-v2; 1 = same meaning)"),
    ("truncation_rate", "truncation rate", 3, "share of calls with script words spoken after "
     "the interviewer closed the turn (0-1)"),
    ("words_lost_share_mean", "words lost", 3, "mean share of the script's words spoken "
     "after the turn closed (0-1)"),
    ("audio_path_loss_mean", "score - oracle", 2, "mean of score - oracle score: the loss "
     "caused by the audio path (points; the oracle grades the script text)"),
    ("asr_suspect_rate", "ASR suspect", 3, "share of calls flagged as a suspect ASR result "
     "(the call's asr_suspect_reason says why; 0-1)"),
    ("turn_suspect_rate", "turn suspect", 3, "share of calls flagged as a suspect turn close "
     "(the call's turn_suspect_reason says why; 0-1)"),
    ("n_excluded", "faults kept out", 0, "calls kept out of the scorer and every mean: the "
     "interviewer did not hear the answer, or heard it as a fault (count; the faults section "
     "says which)"),
    ("n_parse_failures", "parse failures", 0, "calls left out: failed, or the scorer's reply "
     "did not parse (count)"),
    ("n_failed_calls", "failed calls", 0, "calls that failed: no transcript or no score "
     "(count)"),
)

#: Columns shown only when some profile has them (newer summaries).
_OPTIONAL = {"asr_suspect_rate", "turn_suspect_rate", "wer_pooled", "wer_spoken_pooled",
             "n_excluded"}


#: (caption, summary keys) of the tables, in order: every column of :data:`COLUMNS` is in
#: exactly one.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Scores", ("n_pairs", "mean_delta", "ci95", "t_ci95", "flip_rate",
                "tier_inversion_rate", "audio_path_loss_mean")),
    ("What was heard", ("wer_mean", "wer_pooled", "wer_spoken_mean", "wer_spoken_pooled",
                        "content_similarity_mean", "truncation_rate",
                        "words_lost_share_mean")),
    ("Flags and calls left out", ("asr_suspect_rate", "turn_suspect_rate", "n_excluded",
                                  "n_parse_failures", "n_failed_calls")),
)


Column = tuple[str, str, int, str]


def groups(cols: list[Column]) -> list[tuple[str, list[Column]]]:
    """``cols`` (:func:`columns`) split by :data:`GROUPS`, in its order; a group with none of
    ``cols`` is left out."""
    by_key = {c[0]: c for c in cols}
    out = [(caption, [by_key[k] for k in keys if k in by_key]) for caption, keys in GROUPS]
    return [(caption, cs) for caption, cs in out if cs]


def columns(profiles: dict[str, ProfileSummary]) -> list[tuple[str, str, int, str]]:
    """The columns this summary fills: the optional ones only when a profile has them (its
    file holds the field)."""
    return [c for c in COLUMNS
            if c[0] not in _OPTIONAL or any(c[0] in d.model_fields_set
                                            for d in profiles.values())]


def _row_head(pid: str, d: ProfileSummary, baseline: str, low_judge: bool) -> str:
    """A profile's row header: its name (cut with the whole name in ``title`` when long), and
    its flags."""
    flag = (" <span class='flag'>(within noise floor)</span>" if d.within_noise_floor
            else "")
    if low_judge and pid != baseline:
        flag += " <span class='flag'>(low-validity judge)</span>"
    if pid == baseline and pid != "baseline":
        flag += " <span class='note'>(baseline)</span>"
    return f"<th scope='row'>{name_cell(pid)}{flag}</th>"


def profile_table(summary: CampaignSummary) -> str:
    """The tables (one per :data:`GROUPS` entry), each in a wrapper that scrolls on a phone,
    with a legend of their columns."""
    profiles = summary.profiles
    baseline = summary.baseline
    low_judge = summary.judge_validity is not None and summary.judge_validity.verdict == "low"
    cols = columns(profiles)
    heads = {pid: _row_head(pid, d, baseline, low_judge) for pid, d in profiles.items()}
    tables = []
    for caption, cs in groups(cols):
        head = "".join(
            f"<th scope='col'><abbr title='{html.escape(help_, quote=True)}'>"
            f"{html.escape(label)}</abbr></th>" for _, label, _, help_ in cs)
        body = "".join(
            f"<tr>{heads[pid]}"
            + "".join(f"<td>{_fmt(getattr(d, k), digits)}</td>" for k, _, digits, _ in cs)
            + "</tr>" for pid, d in profiles.items())
        tables.append(
            "<div class='table-wrap' role='region' tabindex='0' aria-label='per-profile "
            f"figures: {html.escape(caption.lower())}'><table class='profiles'><caption>"
            f"{html.escape(caption)}</caption><thead><tr>"
            f"<th scope='col'>profile</th>{head}</tr></thead><tbody>{body}</tbody>"
            "</table></div>")
    legend = "".join(f"<dt>{html.escape(label)}</dt><dd>{html.escape(help_)}</dd>"
                     for _, label, _, help_ in cols)
    return ("".join(tables) + "<p class='note'><b>What the columns mean</b> (also on hover):"
            f"</p><dl class='legend'>{legend}</dl>")
