"""The report says a repeated reason once, says when a list is cut, and ties the words lost
at the turn close to the alignment's deletions (issue 33, item 7)."""

from __future__ import annotations

import pandas as pd
import pytest

from rig.drilldown.align import align_transcript, alignment_words
from rig.report import _notes_html, _worst_html

pytestmark = pytest.mark.unit


def test_a_reason_shared_by_profiles_and_fields_is_said_once():
    from summaries import profile_like

    why = "not measured: the repeats are identical (all 5 pairs)"
    profiles = {p: profile_like(not_computable={"within_noise_floor": why,
                                                "flip_within_noise_floor": why})
                for p in ("slow", "fast", "noisy")}
    html = _notes_html(profiles)
    assert html.count(why) == 1
    assert "<b>slow</b> within_noise_floor, flip_within_noise_floor" in html


def test_the_truncated_list_says_how_many_it_shows():
    rows = pd.DataFrame({"answer_id": list("abcde"), "profile_id": ["p"] * 5,
                         "truncated": [True] * 5, "words_lost_share": [.1, .5, .3, .2, .4],
                         "transcript": ["x"] * 5})
    html = _worst_html(rows)
    assert "3 of 5 shown" in html and html.count("<li>") == 3
    assert "all 2" in _worst_html(rows.head(2))


def test_words_lost_and_the_alignments_deletions_agree():
    script = "we agreed to restock the cooler"
    steps = align_transcript(script, "we agreed two")  # 3 lost at the close, 'to' misheard
    said = alignment_words(steps, 3)
    assert said == ("Alignment (normalised words): 2 equal, 1 substituted, 3 deleted, "
                    "0 inserted; of the 3 deleted, 3 were spoken after the turn closed "
                    "(struck through in the script) and 0 missed by the ASR.")
    said = alignment_words(align_transcript(script, "we to"), 3)
    assert "of the 4 deleted, 3 were spoken after the turn closed" in said and \
        "1 missed by the ASR" in said
    assert alignment_words(steps, 0).endswith("0 inserted.")


def test_the_unmeasured_noise_floors_reason_is_linked_not_repeated():
    from summaries import profile_like

    why = "profile 'baseline' has no answer with two or more scored repeats"
    profiles = {p: profile_like(not_computable={"within_noise_floor": why})
                for p in ("slow", "fast")}
    html = _notes_html(profiles, why)
    assert "two or more" not in html and html.count("href='#noise'") == 1
    assert "<b>slow</b> within_noise_floor; <b>fast</b> within_noise_floor" in html
