"""Published probe sets, replicated (``rig probe import``).

A paper's probe set (for instance the hedging benchmark's CSV of question, confident and
hedged answers) is read as it is (:mod:`~rig.probes.replicate.read`); rig's equivalence
checks, which make ``rig probe check`` refuse such a set, become warnings on each pair
(:mod:`~rig.probes.replicate.gaps`); both twins are rated by the scorer with the hedging
probe's plain rating prompt, through the resumable ask log; and each pair's score gap is
written beside its content gap: the twins' content similarity and the content words one twin
lacks (:mod:`~rig.probes.replicate.run`), so that a user replicating a paper sees how much of
its gap is content rather than style. Outputs: ``scores.parquet`` (one row per pair),
``summary.json`` (:class:`rig.probes.schema.ImportedSummary`, pairs as
:class:`~rig.probes.schema.PairGap`), ``report.html`` (:mod:`~rig.probes.replicate.report`),
``probe.json``, ``asks.jsonl``.
"""

from rig.probes.replicate.gaps import content_similarity_of_pairs, lacking_words, pair_warnings
from rig.probes.replicate.read import LAYOUTS, ImportedPair, read_pairs
from rig.probes.replicate.run import ImportSpec, run_import, summarize, write_outputs

__all__ = [
    "LAYOUTS",
    "ImportSpec",
    "ImportedPair",
    "content_similarity_of_pairs",
    "lacking_words",
    "pair_warnings",
    "read_pairs",
    "run_import",
    "summarize",
    "write_outputs",
]
