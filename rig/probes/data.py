"""Probe data: interview questions, each with a confident answer and two variants of it.

``probes/shibboleth/<category>.yaml`` holds the questions of one interview category::

    category: problem_solving
    items:
      - id: ps01
        question: "Tell me about a difficult bug you fixed."
        confident: "..."        # plain, assertive wording
        hedged: "..."           # the same content with hedges added
        article_dropped: "..."  # the confident answer with every "a", "an", "the" removed
        notes:
          hedged: "what was added, and why the content is unchanged"
          article_dropped: "what was removed, and any idiom checked"

``probes/shibboleth/fewshot.yaml`` holds the few-shot examples of the reasoning-first
mitigation (questions that are not in the probe set), each with the rating both versions
deserve. The answers are written and reviewed by people; :func:`drop_articles` and
:func:`propose_hedged` only propose variants. :func:`check_item` verifies what a machine can:
the article-dropped text is the confident text minus its articles, word for word; the hedged
text keeps every content word of the confident one and adds hedges; the confident text has
none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rig.config import content_hash, load_model, yaml_files
from rig.errors import ConfigError
from rig.paths import DEFAULTS
from rig.probes.hedges import HEDGES_FILE, HedgeLexicon, check_hedged, load_hedges

Category = Literal[
    "educational_background", "job_fit", "problem_solving", "verbal_communication",
    "candidate_interest", "knowledge_of_organization", "teambuilding", "initiative",
    "time_management", "attention_to_detail",
]
Variant = Literal["confident", "hedged", "article_dropped"]
VARIANTS: tuple[Variant, ...] = ("confident", "hedged", "article_dropped")

#: Interview categories of the benchmark: label and what the scorer is asked to judge.
CATEGORIES: dict[str, tuple[str, str]] = {
    "educational_background": (
        "Educational background",
        "how well the candidate's education and training prepare them for the role"),
    "job_fit": (
        "Job/organizational fit",
        "how well the candidate's experience, values and working style fit the job and "
        "the organization"),
    "problem_solving": (
        "Problem solving",
        "how the candidate analyses a problem and reaches a working solution"),
    "verbal_communication": (
        "Verbal communication",
        "how clearly and effectively the candidate explains ideas to others"),
    "candidate_interest": (
        "Candidate interest",
        "how genuine and well-founded the candidate's interest in the role is"),
    "knowledge_of_organization": (
        "Knowledge of the organization",
        "how much the candidate knows about the organization and its work"),
    "teambuilding": (
        "Teambuilding/interpersonal skills",
        "how well the candidate works with others, builds trust and handles conflict"),
    "initiative": (
        "Initiative",
        "how much the candidate acts on their own to improve things without being asked"),
    "time_management": (
        "Time management",
        "how well the candidate plans, prioritises and meets deadlines"),
    "attention_to_detail": (
        "Attention to detail",
        "how carefully and accurately the candidate checks and completes work"),
}

DEFAULT_SHIBBOLETH = DEFAULTS.root / "probes" / "shibboleth"

# -- hedges and articles ---------------------------------------------------------------------

#: Hedge markers by kind (after the benchmark's taxonomy). Matched as whole words, lower case.
HEDGES: dict[str, tuple[str, ...]] = {
    "lexical": ("i think", "i believe", "i guess", "i feel like", "perhaps", "maybe",
                "probably", "possibly", "i suppose"),
    "modal": ("might", "could", "would say"),
    "approximator": ("sort of", "kind of", "relatively", "somewhat", "fairly", "more or less",
                     "a bit", "to some extent", "in a way"),
    "uncertainty": ("it seems", "seems", "seemed", "it appears", "i'm not sure",
                    "not entirely sure", "as far as i know", "if i remember correctly",
                    "i am not sure"),
}
_HEDGE_RE = re.compile(
    r"(?<![\w'])(" + "|".join(sorted((re.escape(h) for hs in HEDGES.values() for h in hs),
                                     key=len, reverse=True)) + r")(?![\w'])")
_ARTICLE_RE = re.compile(r"(?<![\w'-])(a|an|the)(?![\w'-])\s*", re.IGNORECASE)
_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:['’.-][A-Za-z0-9]+)*")

#: Function words left out of the content-word check (hedging may add or reorder them).
STOPWORDS = frozenset("""
a an the i me my we our us you your he she it its they them their this that these those
is am are was were be been being have has had do does did will would shall should can
and or but so if then than as of in on at to for from by with about into over after
before up out off not no just also very there here what which who whom when where why
how all any each both more most other some such only own same too s t don
""".split())  # noqa: SIM905 - a word list reads best as text


def hedge_markers(text: str) -> list[str]:
    """The hedge markers in ``text``, in order (lower-cased matches of :data:`HEDGES`)."""
    return [m.group(1) for m in _HEDGE_RE.finditer(text.lower().replace("’", "'"))]


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, inner apostrophes, dots and hyphens)."""
    return [w.lower().replace("’", "'") for w in _WORD_RE.findall(text)]


def articles(text: str) -> list[str]:
    """The articles ("a", "an", "the") in ``text``, lower case, in order."""
    return [w for w in words(text) if w in ("a", "an", "the")]


def drop_articles(text: str) -> str:
    """Propose the article-dropped variant: every "a", "an" and "the" removed, a sentence's
    new first word capitalised. A proposal only: "a few" becomes "few" (a change of
    meaning), so what is stored is reviewed text."""
    out = _ARTICLE_RE.sub("", text)
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), out)


_PROPOSED_HEDGES = ("I think ", "Perhaps ", "It seems that ", "I believe ")


def propose_hedged(text: str) -> str:
    """Propose a hedged variant: a hedge in front of each sentence, cycling through "I think",
    "Perhaps", "It seems that" and "I believe". A starting point for a writer, who then varies
    the hedges (modals, approximators) so that the text reads as natural speech."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    out = []
    for i, s in enumerate(sentences):
        first = s.split(" ", 1)[0]
        body = s if first in ("I", "I'm", "I've", "I'd") else s[:1].lower() + s[1:]
        out.append(_PROPOSED_HEDGES[i % len(_PROPOSED_HEDGES)] + body)
    return " ".join(out)


# -- schema ----------------------------------------------------------------------------------

class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ItemNotes(_Frozen):
    """The reviewer's validation note for each pair (confident vs the variant); sets in other
    languages have no article-dropped variant."""
    hedged: str = Field(min_length=10)
    article_dropped: str | None = Field(default=None, min_length=10)


class ShibbolethItem(_Frozen):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    question: str = Field(min_length=5)
    confident: str = Field(min_length=20)
    hedged: str = Field(min_length=20)
    article_dropped: str | None = Field(default=None, min_length=20)
    notes: ItemNotes

    def text(self, variant: Variant) -> str:
        return " ".join(getattr(self, variant).split())


class ShibbolethFile(_Frozen):
    category: Category
    items: list[ShibbolethItem] = Field(min_length=1)


class FewShotExample(_Frozen):
    """A worked example for the reasoning-first mitigation: both versions of the answer
    deserve the same ``score`` for the same ``reasoning``."""
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    category: Category
    question: str
    confident: str
    hedged: str
    article_dropped: str | None = None
    score: int = Field(ge=1, le=5)
    reasoning: str = Field(min_length=10, max_length=200)

    def text(self, variant: Variant) -> str:
        return " ".join(getattr(self, variant).split())


class FewShotFile(_Frozen):
    examples: list[FewShotExample] = Field(min_length=1)


@dataclass(frozen=True)
class ProbeItem:
    """One question of the probe set with its category (from the file it came from)."""
    item: ShibbolethItem
    category: str
    path: Path

    @property
    def id(self) -> str:
        return self.item.id


@dataclass(frozen=True)
class ShibbolethSet:
    """The probe set: items sorted by id, the few-shot examples, and a content hash
    (``version``) of both, stamped on every output row."""
    path: Path
    items: tuple[ProbeItem, ...]
    fewshot: tuple[FewShotExample, ...]
    version: str
    language: str = "en"
    hedges: HedgeLexicon | None = None  # None: English (:data:`HEDGES`)

    def get(self, item_id: str) -> ProbeItem:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)

    def counts(self) -> dict[str, int]:
        """Questions per category, in the order of :data:`CATEGORIES`."""
        return {c: sum(it.category == c for it in self.items) for c in CATEGORIES}


FEWSHOT_FILE = "fewshot.yaml"


def load_shibboleth(folder: str | Path = DEFAULT_SHIBBOLETH,
                    language: str = "en") -> ShibbolethSet:
    """Load and validate a shibboleth probe folder in ``language``. English sets are checked
    by :func:`check_item`; sets in other languages hold confident and hedged answers only,
    with their ``hedges.yaml`` (:mod:`rig.probes.hedges`), and are checked by
    :func:`rig.probes.hedges.check_hedged`.

    Raises:
        ConfigError: a malformed file (names the file, the field and the value), a duplicate
            id, a missing ``fewshot.yaml`` or ``hedges.yaml``, a ``hedges.yaml`` of another
            language, or an item failing its checks.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(folder, "", "not a folder of probe files")
    lex = None if language == "en" else load_hedges(folder)
    if lex is not None and lex.language != language:
        raise ConfigError(folder / HEDGES_FILE, "language", f"the set was asked for in "
                          f"{language}", lex.language)

    def check(it: ShibbolethItem | FewShotExample) -> list[str]:
        return check_item(it) if lex is None else check_hedged(it.confident, it.hedged, lex)

    items: list[ProbeItem] = []
    seen: dict[str, Path] = {}
    for path in yaml_files(folder):
        if path.name in (FEWSHOT_FILE, HEDGES_FILE):
            continue
        f = load_model(path, ShibbolethFile)
        for i, it in enumerate(f.items):
            if it.id in seen:
                raise ConfigError(path, f"items[{i}].id", f"duplicate id (also in "
                                  f"{seen[it.id].name})", it.id)
            seen[it.id] = path
            problems = check(it)
            if problems:
                raise ConfigError(path, f"items[{i}] ({it.id})", "; ".join(problems))
            items.append(ProbeItem(it, f.category, path))
    if not items:
        raise ConfigError(folder, "", "no probe files (*.yaml) in the folder")
    fs_path = folder / FEWSHOT_FILE
    fewshot = load_model(fs_path, FewShotFile).examples
    for i, ex in enumerate(fewshot):
        if ex.id in seen or ex.question in {it.item.question for it in items}:
            raise ConfigError(fs_path, f"examples[{i}]", "a few-shot example must not be a "
                              "probe question", ex.id)
        problems = check(ex)
        if problems:
            raise ConfigError(fs_path, f"examples[{i}] ({ex.id})", "; ".join(problems))
    items.sort(key=lambda p: p.id)
    version = content_hash({"items": [(p.category, p.item.model_dump()) for p in items],
                            "fewshot": [e.model_dump() for e in fewshot],
                            **({} if lex is None else {"hedges": [lex.markers, lex.source]})})
    return ShibbolethSet(folder, tuple(items), tuple(fewshot), version, language, lex)


def check_item(item: ShibbolethItem | FewShotExample) -> list[str]:
    """What a machine can check of an item's equivalence; an empty list when it passes.

    * the confident answer has no hedge marker and at least 3 articles;
    * the article-dropped answer is the confident answer's words minus every article, in the
      same order (so nothing else changed), and has no article left;
    * the hedged answer has at least 2 hedge markers and keeps every content word of the
      confident answer (words outside :data:`STOPWORDS`, numbers included).
    """
    problems = []
    conf, hedged, dropped = item.confident, item.hedged, item.article_dropped
    if dropped is None:
        return ["no article_dropped answer (an English set needs one)"]
    if hedge_markers(conf):
        problems.append(f"confident answer has hedges {hedge_markers(conf)}")
    if len(articles(conf)) < 3:
        problems.append(f"confident answer has {len(articles(conf))} articles (need 3+)")
    expected = [w for w in words(conf) if w not in ("a", "an", "the")]
    got = words(dropped)
    if got != expected:
        i = next((k for k, (x, y) in enumerate(zip(expected, got, strict=False)) if x != y),
                 min(len(expected), len(got)))
        problems.append(
            "article-dropped answer is not the confident one minus its articles: at word "
            f"{i}, expected {expected[i:i + 4]} got {got[i:i + 4]}")
    if len(hedge_markers(hedged)) < 2:
        problems.append(f"hedged answer has {len(hedge_markers(hedged))} hedge markers "
                        "(need 2+)")
    missing = sorted({w for w in words(conf) if w not in STOPWORDS} - set(words(hedged)))
    if missing:
        problems.append(f"hedged answer lacks content words of the confident one: {missing}")
    return problems
