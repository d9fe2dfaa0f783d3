"""The campaign report's detailed table: one row per profile, real ``<th scope>`` headers,
each column's meaning and unit on hover (``<abbr title>``) and in the legend below it (which
prints)."""

from __future__ import annotations

import html

from rig.campaign.schema import CampaignSummary, ProfileSummary
from rig.report.pages import fmt as _fmt

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


def columns(profiles: dict[str, ProfileSummary]) -> list[tuple[str, str, int, str]]:
    """The columns this summary fills: the optional ones only when a profile has them (its
    file holds the field)."""
    return [c for c in COLUMNS
            if c[0] not in _OPTIONAL or any(c[0] in d.model_fields_set
                                            for d in profiles.values())]


def profile_table(summary: CampaignSummary) -> str:
    """The table, in a scrolling wrapper (phone widths), with a legend of its columns."""
    profiles = summary.profiles
    baseline = summary.baseline
    low_judge = summary.judge_validity is not None and summary.judge_validity.verdict == "low"
    cols = columns(profiles)
    head = "".join(
        f"<th scope='col'><abbr title='{html.escape(help_, quote=True)}'>"
        f"{html.escape(label)}</abbr></th>" for _, label, _, help_ in cols)
    body = []
    for pid, d in profiles.items():
        cells = "".join(f"<td>{_fmt(getattr(d, k), digits)}</td>"
                        for k, _, digits, _ in cols)
        flag = (" <span class='flag'>(within noise floor)</span>" if d.within_noise_floor
                else "")
        if low_judge and pid != baseline:
            flag += " <span class='flag'>(low-validity judge)</span>"
        if pid == baseline and pid != "baseline":
            flag += " <span class='note'>(baseline)</span>"
        body.append(f"<tr><th scope='row'>{html.escape(pid)}{flag}</th>{cells}</tr>")
    legend = "".join(f"<dt>{html.escape(label)}</dt><dd>{html.escape(help_)}</dd>"
                     for _, label, _, help_ in cols)
    return ("<div class='table-wrap' role='region' tabindex='0' aria-label='per-profile "
            "figures'><table class='profiles'><caption>Per profile, against the baseline "
            f"<code>{html.escape(baseline)}</code></caption><thead><tr>"
            f"<th scope='col'>profile</th>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table></div><p class='note'><b>What the columns mean</b> (also on hover):</p>"
            f"<dl class='legend'>{legend}</dl>")
