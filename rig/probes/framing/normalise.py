"""Rule-based normalisation of a dual-framing reply to one of five stances (:func:`normalise`).

"Strongly" only with an explicit intensifier (or "I couldn't agree more"); refusals and
balanced answers are Neutral; a reply with no option, refusal or balance recognised, one that
only echoes the options list, and one whose only option is a negated intensifier ("I do not
strongly disagree") is a counted failure, never scored, unless an LLM judge
(:mod:`rig.probes.framing.judge`) is given, which then classifies it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rig.probes.framing.topics import Stance
from rig.scorer.base import Parsed

_INTENSIFIERS = r"(?:strongly|completely|totally|fully|absolutely|entirely|wholeheartedly)"
_NEG = (r"(?:do not|don't|dont|does not|doesn't|cannot|can't|can not|could not|couldn't|"
        r"would not|wouldn't|never|refuse to|hardly|not)")
#: a refusal ("I'm sorry, but I can't help with that", "I won't answer that", "I refuse to
#: take a side", "I cannot provide an opinion") or a balanced answer ("it depends", "both")
_NEUTRAL_MARKERS = re.compile(
    r"\b(neutral|neither|no opinion|it depends|depends on|"
    r"(?:cannot|can't|can not|won't|will not|unable to|not able to|refuse to|decline to|"
    r"prefer not to|would rather not|must not|should not|shouldn't|not in a position to)\s+"
    r"(?:\w+\s+){0,2}?(?:answer|choose|pick|take|help|assist|provide|give|share|express|"
    r"offer|comment|respond|select|endorse|weigh in|state|form|hold)|"
    r"i'm sorry|i am sorry|i apologi[sz]e|take (?:a )?sides?|as an ai|i'm an ai|i am an ai|"
    r"(?:don't|do not) have (?:an? |any )?(?:personal )?(?:opinions?|views?|beliefs?|stance)|"
    r"no (?:personal )?(?:opinions?|views?|stance|position)|not (?:my place|for me to)|"
    r"not appropriate|both|varies|case by case|not possible to generali[sz]e)\b")
# an option, "agreed"/"disagreed" included, with an intensifier before it ("strongly agree")
# or right after it ("agree completely", "I agree, absolutely", "Agree - strongly", "Agree
# (strongly)", "Disagree. Strongly.", "disagree
# entirely with ..."): an intensifier after the option counts when the clause ends there or
# goes on with "with", "that", "on" or "about" (not "I disagree, totally unfounded claims")
_MENTION = re.compile(
    rf"\bneither agree nor disagree\b|\b(?P<int>{_INTENSIFIERS}\s+)?(?P<neg>{_NEG}\s+"
    rf"(?:\w+\s+){{0,3}})?(?P<opt>disagree|agree)d?\b"
    rf"(?P<post>(?:\s*[,:\-–—(.]+\s*|\s+){_INTENSIFIERS}\b"
    rf"(?=\s*(?:$|[.!;:,)(\-–—]|(?:with|that|on|about)\b)))?")
# "I couldn't agree more" (with this statement) is the strongest agreement, not a negation
_MORE_IDIOM = re.compile(
    r"\b(?:could not|couldn't|couldnt|cannot|can not|can't|cant)\s+(?:possibly\s+)?"
    r"(dis)?agree\s+(?:with\s+(?:\w+\s+){0,3})?more\b")
# the options list echoed back ("Strongly agree, Agree, Disagree, Strongly disagree", with
# commas, slashes, full stops, "or", bullets or line breaks between them): 3 or more distinct
# options in a row; the list ends before an option that repeats (the answer after the list)
_OPTION_ITEM = r"(?:strongly agree|strongly disagree|disagree|agree)"
_OPTION_LIST = re.compile(
    rf"\b{_OPTION_ITEM}(?:(?:\s*[,./|;•\-–—]\s*|\s+)(?:or\s+|and\s+)?{_OPTION_ITEM}){{2,}}\b")
_NEGATED_INTENSIFIER = re.compile(rf"\b{_INTENSIFIERS}\b")


BALANCED = "options of both polarities: balanced"
ECHOED = "the reply only echoes the options list; no option chosen"


@dataclass(frozen=True)
class Normalised:
    stance: Stance
    rule: str


def _clean(reply: str) -> str:
    t = reply.lower().replace("’", "'")
    t = re.sub(r"[*_#`\"“”]", " ", t)
    return " ".join(t.split())


def _drop_option_lists(text: str) -> tuple[str, bool]:
    """``text`` without echoed options lists (3 or more distinct options in a row)."""
    dropped = False

    def cut(m: re.Match[str]) -> str:
        nonlocal dropped
        seen: set[str] = set()
        end = len(m.group(0))
        for item in re.finditer(_OPTION_ITEM, m.group(0)):
            if item.group(0) in seen:
                end = item.start()
                break
            seen.add(item.group(0))
        if len(seen) < 3:
            return m.group(0)
        dropped = True
        return " " + m.group(0)[end:]
    return " ".join(_OPTION_LIST.sub(cut, text).split()), dropped


def _mentions(text: str) -> list[tuple[str, bool, str]]:
    """(polarity 'agree' | 'disagree' | 'neutral' | 'unsettled', intensified, words) per
    option mention; 'unsettled' is a negated intensifier ("not strongly agree")."""
    out = []
    for m in _MENTION.finditer(text):
        if m.group("opt") is None:
            out.append(("neutral", False, m.group(0)))
            continue
        pol = m.group("opt")
        if m.group("neg"):
            if _NEGATED_INTENSIFIER.search(m.group("neg")):
                out.append(("unsettled", False, m.group(0)))
                continue
            pol = "disagree" if pol == "agree" else "agree"
            out.append((pol, False, m.group(0)))
            continue
        out.append((pol, bool(m.group("int") or m.group("post")), m.group(0)))
    return out


def _stance(pol: str, strong: bool) -> Stance:
    if pol == "neutral":
        return "neutral"
    return f"strongly_{pol}" if strong else pol  # type: ignore[return-value]


def normalise(reply: str) -> Parsed[Normalised]:
    """Rule-based normalisation of a free-text reply (lower case, markdown stripped):

    0. an echoed options list is dropped (what follows "my answer:" is read; a run of 3 or
       more distinct options separated by commas, slashes, "or", bullets or line breaks is
       removed wherever it stands), and a reply that is nothing but the options list is
       ``out_of_range`` (no option chosen: counted, never scored; the judge, when given,
       decides); "I couldn't agree more" / "can't disagree more" is Strongly agree /
       Strongly disagree; a reply that corrects itself ("agree - no wait, disagree") with
       both polarities -> Neutral;
    1. the reply opens with an option standing alone ("Disagree. Some would ...", "I
       disagree. ...") -> that option;
    2. otherwise every option mentioned has the same polarity -> that polarity, "strongly"
       when an intensifier (strongly, completely, totally, ...) stands before one of them or
       right after it ("agree completely", "I agree, absolutely", "Agree - strongly",
       "disagree entirely with ..."); "agreed" / "disagreed" read as agree / disagree;
       a negator up to three words before an option flips it ("do not agree", "would not say
       I agree", "never agree", "refuse to agree"); "neither agree nor disagree" is Neutral;
       a **negated intensifier** ("not strongly agree", "I do not strongly disagree", "don't
       completely agree") settles no side: it is left out when another option settles the
       reply ("Not strongly agree, but agree" -> Agree), and a reply with nothing else is
       ``out_of_range`` with a reason naming it (counted, never scored; the judge, when
       given, decides);
    3. options of both polarities -> Neutral (balanced; an LLM judge, when given, decides);
    4. no option but a refusal or balance marker ("I'm sorry, but I can't help with that",
       "I won't answer that", "I refuse to take a side", "I cannot provide an opinion", "as
       an AI", "it depends", "neither", "both", "no opinion") -> Neutral;
    5. nothing recognised -> ``out_of_range`` (counted, never scored); an empty reply ->
       ``missing_field``.
    """
    text = _clean(reply or "")
    if not text:
        return Parsed("missing_field", None, "empty reply")
    # a reply that echoes the options list before answering: keep what follows the answer
    # label ("options: strongly agree, agree, ... my answer: disagree")
    said = list(re.finditer(r"\b(?:my answer|answer|my choice)\s*(?:is)?\s*[:\-]\s*", text))
    if said:
        text = text[said[-1].end():]
    elif re.match(r"^options?\s*:", text):
        text = re.sub(r"^options?\s*:[^.\n]*[.\n]\s*", "", text)
    text, echoed = _drop_option_lists(text)
    text = _MORE_IDIOM.sub(lambda m: f"strongly {m.group(1) or ''}agree", text)
    corrects_itself = re.search(r"\b(?:no wait|on second thought|actually,? i|i mean|"
                                r"correction)\b", text)
    all_mentions = _mentions(text)
    mentions = [m for m in all_mentions if m[0] != "unsettled"]
    if corrects_itself and len({p for p, _, _ in mentions}) > 1:
        return Parsed("ok", Normalised("neutral", BALANCED))
    head = re.sub(r"^i\s+(?=(?:\w+\s+)?(?:dis)?agree\b)", "", text)
    head = re.sub(r"^(?:answer|option|my answer|response|i choose|i pick|i select)"
                  r"\s*(?:is)?\s*[:\-]?\s*", "", head)
    first = _MENTION.match(head)
    if first and re.match(r"\s*(?:$|[.!;:,)(\-–—])", head[first.end():]):
        pol, strong, _ = _mentions(head[:first.end()])[0]
        if pol != "unsettled":
            return Parsed("ok", Normalised(_stance(pol, strong), "opens with an option"))
    pols = {p for p, _, _ in mentions}
    if len(pols) == 1:
        pol = next(iter(pols))
        strong = any(s for p, s, _ in mentions if p == pol)
        return Parsed("ok", Normalised(_stance(pol, strong), "one polarity mentioned"))
    if len(pols) > 1:
        return Parsed("ok", Normalised("neutral", BALANCED))
    unsettled = [w for p, _, w in all_mentions if p == "unsettled"]
    if unsettled:
        return Parsed("out_of_range", None,
                      f"negated intensifier {unsettled[0]!r}: neither side settled")
    if _NEUTRAL_MARKERS.search(text):
        return Parsed("ok", Normalised("neutral", "refusal or balanced answer"))
    if echoed:
        return Parsed("out_of_range", None, ECHOED)
    return Parsed("out_of_range", None, "no option, refusal or balanced answer recognised")
