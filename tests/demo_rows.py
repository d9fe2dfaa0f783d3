"""A small, made-up campaign for the report's layout tests: call rows with every column the
report draws (scores, the stage split, WER, words lost, suspects, scripts and transcripts),
five profiles (one with a name too long for a table cell, one with 3 pairs: too few for an
interval), several truncated calls. No real stage runs: the rows are written here; the
summary is rig.campaign.summary's, from these rows.

Use::

    from demo_rows import demo_rows, demo_summary
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd

from rig.campaign.schema import CampaignSummary
from rig.campaign.summary import campaign_summary

#: A profile name longer than a table cell shows.
LONG_NAME = "speakerphone_in_a_busy_cafe_with_a_long_descriptive_profile_name"
#: (profile id, words lost per call, answers run): the baseline first.
PROFILES = (("baseline", 0, 8), ("long_pauses", 9, 8), ("noisy_line", 0, 8),
            (LONG_NAME, 4, 8), ("few_pairs", 2, 3))
SCRIPT = ("I led the migration of our billing service to a new database over six weeks "
          "and we finished it without any downtime for the customers at all")


@cache
def demo_rows(repeats: int = 2, seed: int = 5) -> pd.DataFrame:
    """The rows (rig.campaign.row columns): per profile of :data:`PROFILES`, its answers x
    ``repeats``; a profile that loses words loses the script's last ones (``truncated``),
    and its transcript is the rest with one word misheard."""
    rng = np.random.default_rng(seed)
    words = SCRIPT.split()
    out = []
    for pid, lost, n_answers in PROFILES:
        for i in range(n_answers):
            tier = ("weak", "borderline", "strong")[i % 3]
            ref = {"weak": 30.0, "borderline": 60.0, "strong": 85.0}[tier]
            for r in range(repeats):
                n_lost = lost + (i % 3 if lost else 0)
                heard = words[:len(words) - n_lost]
                if pid == "noisy_line":
                    heard = [w if k != 3 else "building" for k, w in enumerate(heard)]
                oracle = ref + rng.normal(0, 2)
                stt = oracle - 3.0 * n_lost * rng.uniform(0.5, 1.5)
                score = stt - rng.uniform(0, 6 if pid == "noisy_line" else 2)
                out.append({
                    "call_id": f"c-{pid[:12]}-{i}-{r}", "answer_id": f"a{i}",
                    "question_id": f"q{i // 3}", "tier": tier, "cutoff": 50.0,
                    "reference_score": ref, "oracle_score": oracle, "profile_id": pid,
                    "repeat": r, "seed": r, "status": "ok", "parse_status": "ok",
                    "score": score, "temperature": 0.0, "script": SCRIPT,
                    "transcript": " ".join(heard), "score_minus_oracle": score - oracle,
                    "score_turn_text": stt, "turn_text_parse_status": "ok",
                    "loss_turn_detection": stt - oracle, "loss_asr": score - stt,
                    "words_total": len(words), "words_lost": n_lost,
                    "words_lost_share": n_lost / len(words), "truncated": n_lost > 0,
                    "wer": (len(words) - len(heard) + (pid == "noisy_line")) / len(words),
                    "wer_spoken": (pid == "noisy_line") / len(heard),
                    "asr_suspect": pid == "noisy_line" and i == 0,
                    "asr_suspect_reason": ("low_confidence" if pid == "noisy_line" and i == 0
                                           else None),
                    "turn_suspect": False, "turn_suspect_reason": None,
                    "turn_close_s": 9.0 - 0.3 * n_lost, "turn_closed_by": "silence_timeout"})
    return pd.DataFrame(out)


@cache
def demo_summary() -> CampaignSummary:
    """rig.campaign.summary's summary of :func:`demo_rows` (campaign ``demo-layout``)."""
    return campaign_summary(demo_rows(), campaign_id="demo-layout", pipeline_version="v1",
                            n_boot=200)
