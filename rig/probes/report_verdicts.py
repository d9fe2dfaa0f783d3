"""The verdict at the top of the name-swap, dual-framing and invariance reports: plain
sentences with 95% intervals, a forest (dot-and-interval) plot, and the largest gaps side by
side. Sentences and plots come from the run's summary; the examples from its
``scores.parquet`` beside ``report.html`` (left out, with a note, when it is not there).
Intervals: a hire rate's is Wilson's score interval (Wilson 1927), the difference of two
groups' hire rates Newcombe's hybrid score interval (Newcombe 1998, method 10), both from
statsmodels; a dual-framing mean's the one-sample t interval mean +- t(0.975, n-1) sd /
sqrt(n); an invariance difference's the paired t interval of the summary (``t_ci95``)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from rig.probes.report import ci_text, esc, gap_sentence, plural, side_by_side
from rig.probes.report_language import lang_attr
from rig.probes.schema import FramingSummary, InvarianceSummary, NameSwapSummary
from rig.report.svgplot import ForestRow, forest_svg, num

N_EXAMPLES = 3


def _scores(report_path: Path) -> pd.DataFrame | None:
    f = Path(report_path).parent / "scores.parquet"
    try:
        return pd.read_parquet(f) if f.is_file() else None
    except (OSError, ValueError):
        return None


def _no_examples() -> list[str]:
    return ["<p class='note'>Examples need the run's scores.parquet beside this report.</p>"]


def _clip(text: object, n: int = 600) -> str:
    t = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return esc(t if len(t) <= n else t[: n - 1] + "\u2026")


# -- name swap ---------------------------------------------------------------------------------

def hire_counts(r: dict) -> tuple[int, int]:
    """(hires, scored hire replies) of a group's ``by_group`` entry."""
    n = int((r.get("n_scored") or {}).get("hire", 0))
    rate = r.get("hire_rate")
    return (0 if rate is None else round(rate * n)), n


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """Wilson's 95% score interval of k successes in n (None when n = 0)."""
    if n == 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float] | None:
    """Newcombe's 95% hybrid score interval of p1 - p2 (None when a side is empty)."""
    if n1 == 0 or n2 == 0:
        return None
    from statsmodels.stats.proportion import confint_proportions_2indep

    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff",
                                        alpha=0.05)
    return float(lo), float(hi)


def name_swap_verdict(s: NameSwapSummary) -> list[str]:
    """Per name set and prompt condition, each group against the set's first group: hire
    rates and their difference with 95% intervals, mean qualification and compensation with
    the group test's p; a dot plot of the hire rates."""
    parts = ["<h2>Verdict</h2>"]
    rows: list[ForestRow] = []
    for set_id, per in s.detail.items():
        info = s.name_sets[set_id]
        labels = {g["id"]: g["label"] for g in info["groups"]}
        for cond, d in per.items():
            groups = list(d["by_group"])
            if not groups:
                continue
            g0, r0 = groups[0], d["by_group"][groups[0]]
            k0, n0 = hire_counts(r0)
            bits = []
            for g in groups[1:]:
                r = d["by_group"][g]
                k, n = hire_counts(r)
                diff = (r["hire_rate"] - r0["hire_rate"]
                        if r.get("hire_rate") is not None and r0.get("hire_rate") is not None
                        else None)
                ci = newcombe(k, n, k0, n0)
                text = (f"{esc(labels.get(g, g))} are hired {plural(k, 'time')} in {n} "
                        f"({num(r.get('hire_rate'))}) against {k0} in {n0} "
                        f"({num(r0.get('hire_rate'))}) "
                        f"for {esc(labels.get(g0, g0))}: a difference of {num(diff)} "
                        f"({esc(ci_text(ci, 'no scored reply'))})")
                if "qualification" in s.features:  # only the features the probe asked
                    text += (f"; mean qualification {num(r.get('mean_qualification'))} "
                             f"against {num(r0.get('mean_qualification'))} "
                             f"(p {_pair_p(d, 'qualification', g0, g)})")
                if "compensation" in s.features:
                    text += (f"; mean compensation {_usd(r.get('mean_compensation_usd'))} "
                             f"against {_usd(r0.get('mean_compensation_usd'))} "
                             f"(p {_pair_p(d, 'compensation', g0, g)})")
                bits.append(text)
            idx = "; ".join(f"{esc(f)} {num(d['features'][f]['bias_index'].get('index'))}"
                            for f in s.features if f in d["features"])
            parts.append(f"<p class='verdict'><b>{esc(info['title'])}, {esc(cond)} prompt</b>: "
                         + "; ".join(bits) + f". Bias index (0 = no pair of groups differs, "
                         f"near 1 = every pair differs strongly): {idx}.</p>")
            for g in groups:
                k, n = hire_counts(d["by_group"][g])
                rows.append(ForestRow(f"{set_id}: {labels.get(g, g)}",
                                      d["by_group"][g].get("hire_rate"), wilson(k, n), cond,
                                      "no scored hire reply"))
    if rows:
        parts.append(forest_svg(
            rows, xlabel="hire rate (share of 'yes' replies)", ref=None, limits=(0.0, 1.0),
            title="Hire rate by name group and prompt condition",
            caption="The share of hire replies that were yes, per name group (rows) and prompt "
                    "condition (colour and marker), with Wilson's 95% score interval. The same "
                    "material is shown under every name; only the name changes."))
    return parts


def _pair_p(d: dict, feature: str, a: str, b: str) -> str:
    from rig.probes.report import p_fmt

    for t in (d["features"].get(feature) or {}).get("pairs", []):
        if {t["group_a"], t["group_b"]} == {a, b}:
            return p_fmt(t.get("p"))
    return "n/a"


def _usd(v: float | None) -> str:
    return "n/a" if v is None else f"${v:,.0f}"


def name_swap_examples(s: NameSwapSummary, report_path: Path) -> list[str]:
    """The items whose qualification moved most with the name alone, the two names' replies
    side by side (names and replies marked with the run's language)."""
    lang = lang_attr(s.language)
    parts = ["<h2>The largest gaps, side by side</h2>",
             "<p class='note'>The same material under two names (the set's first group and "
             "another): the qualification asked of each, with the scorer's reply.</p>"]
    if "qualification" not in s.features:
        return [*parts, "<p class='note'>Qualification was not asked in this run (features: "
                f"{esc(', '.join(s.features))}), so there is no per-item gap to "
                "show; the hire rates above compare the groups.</p>"]
    df = _scores(report_path)
    if df is None or df.empty:
        return parts + _no_examples()
    q = df[(df["feature"] == "qualification") & (df["parse_status"] == "ok")]
    found = []
    for (set_id, cond, _item, _slot), g in q.groupby(["name_set", "condition", "item_id", "slot"],
                                                    sort=True):
        groups = list(s.detail.get(set_id, {}).get(cond, {}).get("by_group", {}))
        if not groups:
            continue
        base = g[g["group"] == groups[0]]
        if base.empty:
            continue
        b = base.iloc[0]
        for _, r in g[g["group"] != groups[0]].iterrows():
            found.append((abs(float(r["value"]) - float(b["value"])), set_id, cond, b, r))
    found.sort(key=lambda x: (-x[0], x[1], x[2], str(x[3]["item_id"])))
    if not found or found[0][0] == 0:
        return [*parts, "<p class='note'>No item's qualification changed with the name.</p>"]
    for gap, set_id, cond, b, r in found[:N_EXAMPLES]:
        if gap == 0:
            break
        panels = []
        for x in (b, r):
            panels += [f"<span{lang}>{esc(x['name'])}</span> ({esc(x['group'])}): "
                       f"qualification <span class='score'>{float(x['value']):g}</span>",
                       f"<blockquote{lang}>{_clip(x['raw'])}</blockquote>"]
        parts.append(f"<p><b>{esc(b['item_id'])}</b> ({esc(b['item_kind'])}: "
                     f"{esc(b['role'])}), {esc(set_id)}, {esc(cond)} prompt, difference "
                     f"{num(float(r['value']) - float(b['value']))}</p>"
                     + side_by_side(*panels))
    return parts


# -- dual framing ------------------------------------------------------------------------------

def t_interval(o: dict) -> tuple[float, float] | None:
    """The one-sample 95% t interval of a ``one_sample`` dict (None below 2 values or with
    no spread)."""
    from scipy import stats

    n, mean, sd = o.get("n") or 0, o.get("mean"), o.get("sd")
    if mean is None or sd is None or n < 2 or sd == 0:
        return None
    h = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return mean - h, mean + h


#: the aligned stance scale's ends (Strongly disagree, Strongly agree)
STANCE_LIMITS = (-2.0, 2.0)


def _on_scale(ci: tuple[float, float] | None) -> tuple[tuple[float, float] | None, bool]:
    """A t interval of a mean stance cut at the scale's ends (a mean cannot leave
    -2 .. +2), and whether it was cut."""
    if ci is None:
        return None, False
    lo, hi = max(ci[0], STANCE_LIMITS[0]), min(ci[1], STANCE_LIMITS[1])
    return (lo, hi), (lo, hi) != (ci[0], ci[1])


def _asymmetry_words(fs: dict) -> str:
    """The asymmetry in words, with the statement pairs (agreed with both wordings,
    disagreed with both, kept its stance) when the summary has them: a mean near 0 can be
    +4 and -4 pairs cancelling, which is not a stance independent of the frame."""
    a, sp = fs.get("asymmetry"), fs.get("statement_pairs") or {}
    if a is None:
        return "not computable"
    n, same, agree, disagree = (sp.get(k, 0) for k in ("n", "n_same_stance", "n_agree_both",
                                                       "n_disagree_both"))
    mixed = bool(n and agree and disagree and agree + disagree > same)
    head = (f"{num(a)}, but only because agreeing with both wordings and disagreeing with "
            "both cancel out" if mixed and abs(a) < 1 else f"{num(a)}, from pairs that pull "
            "both ways: the mean follows the stronger replies, not most pairs" if mixed else
            f"{num(a)}: it agrees with whatever it is shown" if a >= 1 else
            f"{num(a)}: it disagrees with both frames" if a <= -1 else
            f"{num(a)}: its stance hardly depends on the frame")
    if not n:
        return head
    return (f"{head} (of {plural(n, 'statement pair')}, it agreed with both wordings in "
            f"{agree}, disagreed with both in {disagree} and kept its stance across the frames "
            f"in {same})")


def framing_verdict(s: FramingSummary) -> list[str]:
    """Per topic: the mean aligned stance over both frames with its 95% t interval (cut at
    the scale's ends, -2 and +2), and the asymmetry in words with the statement pairs; a
    forest plot of each frame's mean on the -2 .. +2 scale."""
    parts = ["<h2>Verdict</h2>"]
    rows: list[ForestRow] = []
    any_cut = False
    for tid, fs in s.by_topic.items():
        title = s.topics[tid]["title"]
        o = fs["both"]["one_sample"]
        ci, cut = _on_scale(t_interval(o))
        m = o.get("mean")
        lean = ("" if m is None or ci is None else
                f", which favours {esc(s.topics[tid]['a'])}" if ci[0] > 0 else
                f", which favours {esc(s.topics[tid]['b'])}" if ci[1] < 0 else
                ", which includes 0 (no lean is plausible)")
        why = "fewer than 2 scored replies or no spread"
        cut_note = ", cut at the scale's ends" if cut else ""
        parts.append(f"<p class='verdict'><b>{esc(title)}</b>: mean stance {num(m)} on -2 to "
                     f"+2 over both frames ({esc(ci_text(ci, why))}{cut_note}{lean}; "
                     f"{fs['both']['n_scored']} of {fs['both']['n_asked']} replies scored); "
                     f"asymmetry {_asymmetry_words(fs)}.</p>")
        for frame in ("affirmative", "reverse", "both"):
            oo = fs[frame]["one_sample"]
            fci, fcut = _on_scale(t_interval(oo))
            any_cut = any_cut or fcut
            rows.append(ForestRow(f"{title}: {frame}", oo.get("mean"), fci,
                                  frame, "no scored reply"))
    if rows:
        parts.append(forest_svg(
            rows, xlabel="mean aligned stance (+ favours target a)",
            title="Stance by topic and frame", limits=STANCE_LIMITS,
            caption="Mean aligned stance per topic under each frame and both together, with "
                    "the one-sample 95% t interval"
                    + (" (cut at the scale's ends, -2 and +2, where it reaches past them)"
                       if any_cut else "")
                    + "; the dashed line is no lean. The two frames apart from each other: "
                    "the scorer follows the wording, not the claim."))
    return parts


def framing_examples(report_path: Path, language: str = "en") -> list[str]:
    """Statements whose two frames got the most different aligned stances, the two asks'
    statements and replies side by side (marked with the set's ``language``)."""
    lang = lang_attr(language)
    parts = ["<h2>The largest gaps, side by side</h2>",
             "<p class='note'>The same claim in its two frames (target strings swapped), asked "
             "in the same iteration: the replies and their aligned scores.</p>"]
    df = _scores(report_path)
    if df is None or df.empty:
        return parts + _no_examples()
    ok = df[df["aligned_score"].notna()]
    key = ["topic", "statement_index", "iteration"]
    aff = ok[ok["frame"] == "affirmative"].set_index(key)
    rev = ok[ok["frame"] == "reverse"].set_index(key)
    both = aff.join(rev, lsuffix="_a", rsuffix="_r", how="inner")
    if both.empty:
        return [*parts, "<p class='note'>No statement has both frames scored.</p>"]
    both["gap"] = (both["aligned_score_a"] - both["aligned_score_r"]).abs()
    both = both.sort_values("gap", ascending=False, kind="stable")
    shown = both[both["gap"] > 0].head(N_EXAMPLES)
    if shown.empty:
        return [*parts, "<p class='note'>Every statement got the same aligned stance in both "
                         "frames.</p>"]
    for (topic, si, it), r in shown.iterrows():
        panels = []
        for sfx, frame in (("_a", "affirmative"), ("_r", "reverse")):
            panels += [f"{frame}: aligned score <span class='score'>"
                       f"{float(r['aligned_score' + sfx]):+g}</span>",
                       f"<p{lang}>{_clip(r['statement' + sfx])}</p><blockquote{lang}>"
                       f"{_clip(r['raw' + sfx])}</blockquote>"]
        parts.append(f"<p><b>{esc(topic)}</b>, statement {int(si) + 1}, iteration {int(it)}, "
                     f"gap {num(float(r['gap']))}</p>" + side_by_side(*panels))
    return parts


# -- invariance --------------------------------------------------------------------------------

def _untested_why(s: InvarianceSummary, perturbations: list[str]) -> str:
    """Why some measures of these perturbations could not be tested: their tests'
    ``not_computable`` reasons, each once ("" when every measure was tested)."""
    whys = [(t.get("not_computable") or {}).get("violated", "")
            for p in perturbations for t in s.by_perturbation.get(p, {}).get("tests", [])
            if t.get("violated") is None]
    return "; ".join(dict.fromkeys(w for w in whys if w))


def invariance_verdict(s: InvarianceSummary) -> list[str]:
    """The violation rate of each kind of perturbation in words (demographic against the
    controls), the polarity gap of each perturbation with its interval; a forest plot."""
    parts = ["<h2>Verdict</h2>"]
    kinds = s.by_kind
    words = []
    for k, d in kinds.items():
        rate, n_tested = d.get("violation_rate"), d.get("n_tested", 0)
        n_tests = d.get("n_tests", n_tested)
        why = _untested_why(s, d.get("perturbations", []))
        head = f"{esc(k)} perturbations ({esc(', '.join(d['perturbations']))})"
        if not n_tested:
            words.append(f"{head}: 0 of {n_tests} measures could be tested, so no violation "
                         "rate" + (f": {esc(why)}" if why else ""))
            continue
        words.append(f"{head} violate {d.get('n_violated', 0)} of {n_tested} measures "
                     f"tested (rate {num(rate)})"
                     + (f", {n_tests - n_tested} more could not be tested"
                        + (f": {esc(why)}" if why else "") if n_tests > n_tested else ""))
    dem, ctl = (kinds.get("demographic") or {}).get("violation_rate"), \
        (kinds.get("control") or {}).get("violation_rate")
    if dem is not None and ctl is not None:
        words.append("the scorer's assessment moves with a demographic signal "
                     + ("more than with neutral edits: a sign of bias rather than brittleness"
                        if dem > ctl else "no more than with neutral edits: no sign of bias "
                        "beyond general brittleness"))
    if words:
        parts.append("<p class='verdict'>" + "; ".join(words) + ".</p>")
    rows: list[ForestRow] = []
    for pert, d in s.by_perturbation.items():
        for t in d["tests"]:
            if t["measure"] != "polarity":
                continue
            pc = t["paired"]
            parts.append("<p class='verdict'>" + gap_sentence(
                f"{pert} ({d['kind']}), polarity", pc, "perturbed assessments",
                "the reference assessments", "reference", unit="", pair_word="pair") + "</p>")
            rows.append(ForestRow(pert, pc.get("mean_diff"), pc.get("t_ci95"), d["kind"],
                                  (pc.get("not_computable") or {}).get("mean_diff", "")))
    if rows:
        parts.append(forest_svg(
            rows, xlabel="polarity: perturbed - reference (95% t CI)",
            title="Change in the assessment's polarity by perturbation",
            caption="Mean change in the written assessment's polarity (-1 to +1) when the "
                    "material is perturbed, per perturbation (colour and marker: its kind), "
                    "with the paired 95% t interval; the dashed line is no change."))
    return parts


def invariance_examples(report_path: Path) -> list[str]:
    """The pairs whose assessment's polarity moved most, both texts and both assessments
    side by side."""
    parts = ["<h2>The largest gaps, side by side</h2>",
             "<p class='note'>The material before and after the perturbation, and the "
             "scorer's assessment of each with its polarity.</p>"]
    df = _scores(report_path)
    if df is None or df.empty:
        return parts + _no_examples()
    ok = df[df["scored"].fillna(False).astype(bool)].copy()
    ok["gap"] = (ok["perturbed_polarity"] - ok["reference_polarity"]).abs()
    ok = ok.sort_values(["gap", "perturbation", "item_id"], ascending=[False, True, True],
                        kind="stable")
    shown = ok[ok["gap"] > 0].head(N_EXAMPLES)
    if shown.empty:
        return [*parts, "<p class='note'>No assessment's polarity changed.</p>"]
    for _, r in shown.iterrows():
        panels = []
        for side in ("reference", "perturbed"):
            panels += [f"{side}: polarity <span class='score'>{num(r[side + '_polarity'])}"
                       "</span>",
                       f"<blockquote>{_clip(r[side + '_text'], 400)}</blockquote><p>"
                       f"assessment: <i>{_clip(r[side + '_reply'])}</i></p>"]
        parts.append(f"<p><b>{esc(r['perturbation'])}</b> ({esc(r['kind'])}), item "
                     f"{esc(r['item_id'])}, {esc(r['unit'])}: polarity change "
                     f"{num(float(r['perturbed_polarity'] - r['reference_polarity']))}</p>"
                     + side_by_side(*panels))
    return parts
