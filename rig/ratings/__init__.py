"""Human ratings of a campaign's or replay's calls (issue 29): the stored rating
(:mod:`rig.ratings.model`), what a folder lets people rate (:mod:`rig.ratings.units`), the
import of CSV or JSONL from any tool (:mod:`rig.ratings.importer`) and the judge-human
agreement figures built from them (:mod:`rig.ratings.agreement`)."""
