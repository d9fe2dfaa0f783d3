"""The rating page of ``rig ratings collect`` (:mod:`rig.ratings.collect`): HTML, CSS and one
inline script (``rig/data/rate_page.js``), no external resource.

Steps: the rater's id (remembered by the browser; another rater can take over with "Switch
rater"); then one call at a time, named by its position in the sample only: a player for the
audio, the question, and per rubric criterion its description and points with one choice per
credit level (the anchors' text), a "could not hear" box and Save. When nothing is left for
the rater the page says so. The progress bar counts the sample's ratings done of those
needed (a double-rated call needs two).
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from pathlib import Path

_CSS = """
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fafafa}
header{padding:.6rem 1rem;background:#123;color:#fff;display:flex;gap:1rem;flex-wrap:wrap;
 align-items:center}
header h1{font-size:1.1rem;margin:0}
#progress{flex:1;min-width:10rem}
progress{width:100%}
main{padding:1rem;max-width:48rem}
.hidden{display:none}
fieldset{border:1px solid #ccc;background:#fff;margin:0 0 .8rem;padding:.5rem .8rem}
legend{font-weight:600}
.desc{margin:.2rem 0 .4rem;color:#333}
label.level{display:block;padding:.15rem 0;cursor:pointer}
.question{font-size:1.1rem;background:#fff;border-left:4px solid #123;padding:.5rem 1rem}
button{font:inherit;padding:.5rem 1rem;margin:.5rem .4rem .5rem 0}
audio{width:100%;max-width:30rem}
#status{min-height:1.5rem}
.warn{color:#b00;font-weight:600}
"""

#: The page's script, inlined.
_JS_FILE = Path(__file__).resolve().parents[1] / "data" / "rate_page.js"

_BODY = """
<header><h1>rig ratings collect</h1><span id="whoami"></span>
<div id="progress"><span id="count"></span><br><progress id="bar" value="0" max="1"></progress>
</div><button id="switch">Switch rater</button></header>
<main>
<section id="who"><h2>Who is rating?</h2>
<p>Type your rater id (the same one each time you come back: the page then goes on where you
stopped). You will hear candidates' answers to interview questions, one at a time, and grade
each rubric criterion. You are not told which condition or system a call comes from, nor how
any scorer graded it.</p>
<label for="rater">Rater id</label> <input type="text" id="rater" autocomplete="off">
<button id="start">Start</button></section>
<section id="rate" class="hidden" aria-live="polite">
<h2 id="pos"></h2>
<p>Listen to the answer as the interviewer heard it, then grade what you heard against each
criterion. If you could not hear enough of it to grade, tick the box at the end.</p>
<audio id="player" controls></audio>
<p class="question" id="question"></p>
<form id="criteria" onsubmit="return false"></form>
<label><input type="checkbox" id="cnh"> I could not hear this call well enough to grade it
</label>
<p><button id="submit" disabled>Save and next</button></p></section>
<section id="done" class="hidden"><h2>Done</h2><p id="donemsg"></p></section>
<p id="status" role="status"></p>
</main>
"""


@lru_cache(maxsize=1)
def _script() -> str:
    return _JS_FILE.read_text(encoding="utf-8")


def page_html(token: str) -> str:
    """The page; ``token`` is the server's ``X-Rig-Token`` (a data attribute of ``<body>``)."""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<title>rig ratings collect</title><link rel=\"icon\" href=\"data:,\">"
            f"<style>{_CSS}</style></head>"
            f"<body data-token={json.dumps(html.escape(token))}>" + _BODY
            + f"<script>{_script()}</script></body></html>")
