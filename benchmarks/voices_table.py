"""Ship a voice validation: copy ``rig voices validate``'s ``voices.json`` into the package
(``rig/data/voices.json``, which campaign summaries look voices up in) and put its table in
``docs/profiles.md`` between the markers ``<!-- voices:begin -->`` and ``<!-- voices:end -->``.

    rig voices validate --out reports/voices [--answer-id ...]
    python benchmarks/voices_table.py reports/voices/voices.json

The shipped copy keeps every figure and each answer's WER, words per minute and transcript,
not the scripts (the bank has them). The table carries the date and machine of the run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- voices:begin -->", "<!-- voices:end -->"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("voices_json", type=Path)
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "profiles.md")
    ap.add_argument("--data", type=Path, default=ROOT / "rig" / "data" / "voices.json")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from rig.paths import write_text_atomic
    from rig.voices.validate import markdown_table

    doc = json.loads(args.voices_json.read_text(encoding="utf-8"))
    for v in doc["voices"]:
        v["answers"] = [{k: x for k, x in a.items() if k != "reference"} for a in v["answers"]]
    args.data.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.data, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    text = args.docs.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        print(f"{args.docs}: the markers {BEGIN} and {END} are missing", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    write_text_atomic(args.docs, f"{head}{BEGIN}\n{markdown_table(doc)}{END}{tail}")
    print(f"wrote {args.data} and the table in {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
