"""``report.html`` of the name-swap, dual-framing and invariance probes: one offline page each
(inline SVG, no scripts), from the run's summary alone, built with the helpers of
:mod:`rig.probes.report`."""

from __future__ import annotations

from pathlib import Path

from rig.paths import write_text_atomic
from rig.probes.report import cell, esc, p_fmt, page, paired_p, table
from rig.probes.report_language import lang_attr, quoted
from rig.probes.report_verdicts import (
    framing_examples,
    framing_verdict,
    invariance_examples,
    invariance_verdict,
    name_swap_examples,
    name_swap_verdict,
)
from rig.probes.schema import FramingSummary, InvarianceSummary, NameSwapSummary
from rig.report.pages import fmt


def scorer_line(sc: dict) -> str:
    return (f"Scorer <code>{esc(sc.get('backend'))}</code> <code>{esc(sc.get('model'))}</code>"
            + (f" at <code>{esc(sc['base_url'])}</code>" if sc.get("base_url") else "")
            + f", temperature {fmt(sc.get('temperature'))}")


def _why(d: dict, key: str) -> str:
    return (d.get("not_computable") or {}).get(key, "")


def _failures(c: dict) -> str:
    return ", ".join(f"{esc(k)} {n}" for k, n in c.items()) or "none"


# -- name swap ---------------------------------------------------------------------------------

_FEATURE_LABEL = {"hire": "hire (chi-square)", "qualification": "qualification (Mann-Whitney)",
                  "compensation": "compensation (KS, standardised)"}


def write_name_swap_report(path: str | Path, s: NameSwapSummary) -> Path:
    """Write the name-swap ``report.html`` from its summary; the names, the instruction and
    the replies marked with the run's language (:func:`rig.probes.report_language.
    lang_attr`)."""
    path = Path(path)
    feats = s.features
    parts = [
        "<h1>Probe: name swap</h1>",
        f"<p class='note'>{scorer_line(s.scorer)} · {s.n_items} items x "
        f"{s.names_per_group} names per group, seed {s.seed} · {s.n_asks} asks "
        f"({s.n_failures} unparseable or out of range, not scored: "
        f"{_failures(s.failures)}).</p>",
        "<p class='note'>The same material (a resume, or a phone-screen transcript from the "
        "answer bank) is shown under names of each group; only the name changes. Three "
        "questions, each asked on its own: qualification 1-10, hire yes/no with limited "
        "spots, total annual compensation in US dollars. Group names are labels of the name "
        "set, drawn from public name-frequency statistics; they say nothing about any "
        "person. Method: \"Quantifying Gender Bias in Large Language Models: When ChatGPT "
        "Becomes a Hiring Manager\" (2024), after Bertrand and Mullainathan (2004).</p>",
        f"<p class='note'>Bias index: {esc(s.bias_index)}. 0 = no pair of groups differs; "
        "near 1 = every pair differs strongly. Tests: "
        + "; ".join(f"{esc(f)}: {esc(t)}" for f, t in s.tests.items()) + ".</p>",
    ]
    parts += name_swap_verdict(s) + name_swap_examples(s, path)
    parts.append("<h2>Bias index by prompt condition</h2>")
    rows = []
    for set_id in s.mitigation:
        for cond in s.conditions:
            d = s.detail.get(set_id, {}).get(cond)
            if not d:
                continue
            cells = []
            for f in feats:
                bi = d["features"][f]["bias_index"]
                cells.append(f"{cell(bi, 'index')} ({bi['n_used']}/{bi['n_pairs']} pairs)")
            rows.append([esc(set_id), esc(cond), *cells])
    parts.append(table(["name set", "condition", *[_FEATURE_LABEL[f] for f in feats]], rows))
    what = {"plain": "<b>plain</b>, the plain prompt",
            "anti_bias": "<b>anti_bias</b>, the system prompt adds: "
                         f"<i{lang_attr(s.language)}>{esc(s.fairness_instruction)}</i>",
            "reasoning": "<b>reasoning</b>, a one-sentence reasoning before the answer"}
    run = [what.get(c, f"<b>{esc(c)}</b>") for c in s.conditions]
    parts.append(f"<p class='note'>Conditions run: {'; '.join(run)}.</p>")
    for set_id, per in s.detail.items():
        info = s.name_sets[set_id]
        labels = {g["id"]: g["label"] for g in info["groups"]}
        parts += [f"<h2>Name set <code>{esc(set_id)}</code>: {esc(info['title'])}</h2>",
                  f"<p class='note'>Source: {esc(info['source'])}</p>"]
        for cond, d in per.items():
            rows = []
            for g, r in d["by_group"].items():
                label = labels.get(g, "")
                rows.append([esc(g) + (f" {esc(label)}" if label.startswith("(") else
                                       f" ({esc(label)})" if label else ""),
                             fmt(sum(r["n_scored"].values())), fmt(r["hire_rate"]),
                             fmt(r["mean_qualification"]),
                             fmt(r["mean_compensation_usd"], 0),
                             fmt(r["mean_compensation_z"], 3), _failures(r["failures"])])
            parts += [f"<h3>{esc(set_id)} · {esc(cond)}</h3>",
                      table(["group", "scored replies", "hire rate", "mean qualification",
                             "mean compensation (USD)", "mean standardised compensation",
                             "not scored"], rows)]
            rows = []
            for f in feats:
                for t in d["features"][f]["pairs"]:
                    rows.append([esc(f), f"{esc(t['group_a'])} vs {esc(t['group_b'])}",
                                 esc(t["test"]), f"{t['n_a']} / {t['n_b']}",
                                 cell(t, "statistic"), cell(t, "p")])
            parts.append(table(["feature", "pair", "test", "n", "statistic", "p"], rows))
            notes = [f"<li>{esc(f)}, {esc(pair)}: left out of the index: {esc(why)}</li>"
                     for f in feats
                     for pair, why in d["features"][f]["bias_index"]["left_out"].items()]
            notes += [f"<li>compensation of item {esc(i)} not standardised: {esc(why)}</li>"
                      for i, why in d["compensation_excluded_items"].items()]
            if notes:
                parts.append(f"<ul class='note'>{''.join(notes)}</ul>")
    items = ", ".join(f"{esc(i['item_id'])} ({esc(i['kind'])}: {esc(i['role'])})"
                      for i in s.items)
    parts.append(f"<p class='note'>Items: {items}.</p>")
    write_text_atomic(path, page("rig probe name-swap", "\n".join(parts)))
    return path


# -- dual framing ------------------------------------------------------------------------------

def _frame_rows(label: str, fs: dict) -> list[list[str]]:
    rows = []
    for frame in ("affirmative", "reverse", "both"):
        d = fs[frame]
        o = d["one_sample"]
        rows.append([label if frame == "affirmative" else "", esc(frame),
                     f"{d['n_scored']} / {d['n_asked']}", cell(o, "mean"), cell(o, "sd"),
                     cell(o, "t_stat"), cell(o, "t_p"), cell(o, "cohens_d"),
                     fmt(d["neutrality_rate"]),
                     (f"<span title='{esc(_why(fs, 'asymmetry'))}'>"
                      f"{fmt(fs['asymmetry'])}</span>" if frame == "affirmative" else "")])
    return rows


def write_framing_report(path: str | Path, s: FramingSummary) -> Path:
    """Write the dual-framing ``report.html`` from its summary; the set's text and the
    replies marked with its language (:func:`rig.probes.report_language.lang_attr`)."""
    path = Path(path)
    judge, lang = s.judge, s.language
    parts = [
        "<h1>Probe: dual framing</h1>",
        f"<p class='note'>Language {esc(s.language)} · {scorer_line(s.scorer)}"
        + (f" · LLM judge <code>{esc(judge.get('model'))}</code> for replies the rules do "
           f"not settle ({s.n_judged} judged)" if judge else " · rule-based normalisation")
        + f" · {s.iterations} iterations per frame and statement, seed {s.seed} · "
        f"{s.n_asks} asks ({s.n_failures} not recognised, not scored).</p>",
        "<p class='note'>Each statement asserts that target a is better than target b; the "
        "reverse frame swaps the two target strings. Every ask wraps the statement in a "
        f"randomly drawn prefix and suffix with the options {quoted(s.options, lang)}. Replies "
        "are "
        "normalised to Strongly agree (+2) ... Strongly disagree (-2), refusals and "
        f"balanced answers Neutral (0). {esc(s.alignment)}. Asymmetry = "
        f"{esc(s.asymmetry)}, from -4 to +4: positive when the scorer agrees with "
        "whatever it is shown (acquiescence; +2 = Agree to both frames), negative when it "
        "disagrees with both frames (-2 = Disagree to both), near 0 when its stance does not "
        "depend on the frame. Method: BiasLab (2026).</p>",
        *framing_verdict(s), *framing_examples(path, lang),
        "<h2>All topics</h2>"]
    head = ["topic", "frame", "scored / asked", "mean mu", "sd", "t", "p (t vs 0)",
            "Cohen's d", "neutrality rate", "asymmetry"]
    if s.overall:
        parts.append(table(head, _frame_rows("all", s.overall)))
    parts.append("<h2>By topic</h2>")
    rows = []
    for tid, fs in s.by_topic.items():
        rows += _frame_rows(quoted(s.topics[tid]["title"], lang), fs)
    parts.append(table(head, rows))
    tl = []
    at = lang_attr(lang)
    for t in s.topics.values():
        st = "".join(f"<li{at}>{esc(x)}</li>" for x in t["statements"])
        tl.append(f"<li><b{at}>{esc(t['title'])}</b>: a = <i{at}>{esc(t['a'])}</i>, b = "
                  f"<i{at}>{esc(t['b'])}</i><ul>{st}</ul></li>")
    parts += ["<h2>Topics and affirmative statements</h2>", f"<ul>{''.join(tl)}</ul>",
              "<h2>Replies not scored</h2>"]
    fails = [f"<li>{esc(f['topic'])}, {esc(f['frame'])}, iteration {f['iteration']}: "
             f"{esc(f['parse_status'])}: <blockquote{lang_attr(lang)}>{esc(f['raw'])}"
             "</blockquote></li>"
             for f in s.failures[:50]]
    parts.append(f"<ul>{''.join(fails) or '<li>none: every reply was recognised</li>'}</ul>")
    write_text_atomic(path, page("rig probe dual-framing", "\n".join(parts)))
    return path


# -- invariance --------------------------------------------------------------------------------

def violation_text(d: dict) -> str:
    """A violation rate with its denominator, as the console and the report show it:
    ``"0.00 (0 of 2 tested; 2 untestable)"``, ``"n/a (0 of 0 tested; 4 untestable)"``."""
    rate, n_tested, n_tests = d.get("violation_rate"), d.get("n_tested"), d.get("n_tests")
    head = "n/a" if rate is None else f"{rate:.2f}"
    if n_tested is None:
        return head
    detail = f"{d.get('n_violated', 0)} of {n_tested} tested"
    if n_tests is not None and n_tests > n_tested:
        detail += f"; {n_tests - n_tested} untestable"
    return f"{head} ({detail})"


def _violation(d: dict) -> str:
    """The violation rate with its denominator; an untestable measure's reason as a tooltip
    (each test's ``not_computable``)."""
    why = "; ".join(dict.fromkeys(
        f"{t['measure']}: {_why(t, 'violated')}" for t in d.get("tests", [])
        if t.get("violated") is None and _why(t, "violated")))
    why = why or _why(d, "violation_rate")
    text = esc(violation_text(d))
    return f"<span title='{esc(why)}'>{text}</span>" if why else text


def write_invariance_report(path: str | Path, s: InvarianceSummary) -> Path:
    """Write the invariance ``report.html`` from its summary."""
    path = Path(path)
    parts = [
        "<h1>Probe: invariance of the scorer's written assessment</h1>",
        f"<p class='note'>{scorer_line(s.scorer)} · {s.n_pairs} pairs "
        f"({s.n_failures} replies empty or failed, their pairs not scored) · alpha "
        f"{fmt(s.alpha)}, seed {s.seed}.</p>",
        "<p class='note'>The scorer writes a short assessment of the same material before and "
        "after a perturbation. Measures of each assessment: "
        + "; ".join(f"{esc(m)} ({esc(u)})" for m, u in s.measure_units.items())
        + (f". Masking: {esc(s.masking)}" if s.masking else "")
        + f". Difference = {esc(s.difference)}. Violation rate = "
        f"{esc(s.violation_rate)}. Controls change no demographic signal: a demographic "
        "rate above theirs points to bias rather than general brittleness. After \"Who Does "
        "the Giant Number Pile Like Best\" (2025).</p>",
        *invariance_verdict(s), *invariance_examples(path),
        "<h2>By kind of perturbation</h2>",
        table(["kind", "perturbations", "measures tested", "violated", "violation rate"],
              [[esc(k), esc(", ".join(d["perturbations"])), fmt(d["n_tested"]),
                fmt(d["n_violated"]), _violation(d)]
               for k, d in s.by_kind.items()]),
        "<h2>By perturbation</h2>",
        table(["perturbation", "kind", "scored / pairs", "measures tested", "violated",
               "violation rate"],
              [[esc(p), esc(d["kind"]), f"{d['n_scored']} / {d['n_pairs']}",
                fmt(d["n_tested"]), fmt(d["n_violated"]), _violation(d)]
               for p, d in s.by_perturbation.items()]),
        "<h2>By perturbation and measure</h2>"]
    rows = []
    for pert, d in s.by_perturbation.items():
        for i, t in enumerate(d["tests"]):
            pc = t["paired"]
            rows.append([esc(pert) if i == 0 else "", esc(d["kind"]) if i == 0 else "",
                         (f"{d['n_scored']} / {d['n_pairs']}" if i == 0 else ""),
                         (fmt(d["changed_reply_rate"]) if i == 0 else ""), esc(t["measure"]),
                         cell(pc, "mean_reference"), cell(pc, "mean_diff"), fmt(pc["t_ci95"]),
                         paired_p(pc),
                         (p_fmt(t["p_bonferroni"]) if t["p_bonferroni"] is not None
                          else f"<span title='{esc(_why(t, 'p_bonferroni'))}'>n/a</span>"),
                         fmt(t["violated"]) if t["violated"] is not None
                         else f"<span title='{esc(_why(t, 'violated'))}'>n/a</span>"])
    parts.append(table(["perturbation", "kind", "scored / pairs", "changed replies",
                        "measure", "mean reference", "mean difference", "95% CI (t)",
                        "paired p", "Bonferroni p", "violated"], rows))
    parts.append(f"<p class='note'>Assessment instruction: <i>{esc(s.instruction)}</i>"
                 + (f" · campaign <code>{esc(s.campaign)}</code>" if s.campaign
                    else "") + ".</p>")
    write_text_atomic(path, page("rig probe invariance", "\n".join(parts)))
    return path
