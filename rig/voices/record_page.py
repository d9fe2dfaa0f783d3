"""The recording page of ``rig voices record`` (:mod:`rig.voices.record`): HTML, CSS and one
inline script, no external resource.

Steps: the consent text and an "I agree" box; the microphone switched on (the browser's
permission prompt; its device label pre-fills the device field) and a form where the speaker
describes their accent and language background in their own words (all optional); then the
answers, one at a time: the question, the script with its cues (``[pause 1.2s]`` as a pause
mark, ``[um]`` as the filler word to say), Record/Stop, a level meter (RMS and peak in dBFS,
"too loud" near full scale), play-back of the saved take and Re-take. The list on the left
shows which answers have a file in the folder (progress across sessions comes from the
server).

Audio path: ``getUserMedia`` (echo cancellation, noise suppression and automatic gain off,
so the file is the microphone's signal) -> ``MediaStreamSource`` -> an ``AudioWorklet``
that posts the first input channel in blocks of 2048 samples -> on Stop, the blocks are
joined, converted to 16-bit PCM and sent with ``PUT /api/recordings/<answer_id>?sample_rate_hz=
<the AudioContext's rate>``. The microphone is opened at Record and closed at Stop.
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
main{display:flex;gap:1rem;padding:1rem;flex-wrap:wrap}
nav{flex:0 0 14rem;max-height:80vh;overflow:auto}
nav button{display:block;width:100%;text-align:left;margin:0 0 2px;padding:.3rem .5rem;
 border:1px solid #ccc;background:#fff;cursor:pointer;font:inherit;font-size:.9rem}
nav button.done::before{content:"\\2713  ";color:#2a7}
nav button.current{border-color:#123;background:#e8eef5}
section{flex:1;min-width:18rem;max-width:48rem}
.hidden{display:none}
blockquote{border-left:4px solid #123;margin:0 0 1rem;padding:.5rem 1rem;background:#fff}
label{display:block;margin:.6rem 0 .2rem;font-weight:600}
textarea,input[type=text]{width:100%;box-sizing:border-box;font:inherit;padding:.3rem}
.script{font-size:1.35rem;line-height:1.8;background:#fff;padding:1rem;border:1px solid #ddd}
.cue{display:inline-block;background:#ffe9a8;border-radius:4px;padding:0 .4rem;margin:0 .2rem;
 font-size:.95rem;white-space:nowrap}
.filler{font-style:italic;background:#e4f1ff;border-radius:4px;padding:0 .3rem}
.question{color:#555}
.controls button{font:inherit;padding:.5rem 1rem;margin:.5rem .4rem .5rem 0}
#rec.on{background:#c22;color:#fff}
#meter{height:14px;background:#ddd;position:relative;max-width:30rem}
#meterbar{height:100%;width:0;background:#2a7}
#meterbar.hot{background:#c22}
#status{min-height:1.5rem}
.warn{color:#b00;font-weight:600}
@media (max-width:600px){nav{flex-basis:100%;max-height:25vh}}
"""

#: The page's script, inlined (rig/data/record_page.js).
_JS_FILE = Path(__file__).resolve().parents[1] / "data" / "record_page.js"

_BODY = """
<header><h1>rig voices record: {speaker}</h1>
<div id="progress"><span id="count"></span><br><progress id="bar" value="0" max="1"></progress>
</div></header>
<main>
<nav id="list" aria-label="answers"></nav>
<section id="consent" class="hidden"><h2>Before you start</h2>
<p>Please read this. Nothing is recorded until you agree.</p>
<blockquote id="consenttext"></blockquote>
<label><input type="checkbox" id="agree"> I have read this and I agree</label>
<p><button id="continue" disabled>Continue</button></p></section>
<section id="about" class="hidden"><h2>About you, in your own words</h2>
<p>Every field is optional. Write what you want others to know; nothing else is stored about
you, and nothing is worked out from your voice.</p>
<p><button id="micbtn">Switch on the microphone</button> <span id="micstate"></span></p>
<label for="accent">Your accent, as you would describe it</label>
<textarea id="accent" rows="2"></textarea>
<label for="languages">Your languages: first language, others, where you learned them</label>
<textarea id="languages" rows="2"></textarea>
<label for="device">Microphone or device</label><input type="text" id="device">
<label for="notes">Anything else</label><textarea id="notes" rows="2"></textarea>
<input type="hidden" id="rate">
<p><button id="save" disabled>Save and start recording</button></p></section>
<section id="record" class="hidden" aria-live="polite">
<h2 id="qid"></h2><p class="question" id="question"></p>
<p>Read the answer aloud as you would say it on a phone call. At a
<span class="cue">pause</span> mark stay silent for about that long; say the
<span class="filler">highlighted</span> filler words. Wait a second after pressing Record
before you speak, and a second after the last word before you press Stop.</p>
<div class="script" id="script"></div>
<div class="controls"><button id="rec">Record</button><button id="stop" disabled>Stop</button>
<button id="check">Check level</button><button id="next">Next</button>
<span id="clock"></span></div>
<div id="meter"><div id="meterbar"></div></div><div id="level"></div>
<p id="status" role="status"></p>
<p id="saved"></p><audio id="player" controls class="hidden"></audio>
</section></main>
"""


@lru_cache(maxsize=1)
def _script() -> str:
    return _JS_FILE.read_text(encoding="utf-8")


def page_html(token: str, speaker_id: str) -> str:
    """The page for ``speaker_id``; ``token`` is the server's ``X-Rig-Token`` (in a data
    attribute of ``<body>``)."""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>rig voices record: {html.escape(speaker_id)}</title>"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<style>{_CSS}</style></head>"
            f"<body data-token={json.dumps(html.escape(token))}>"
            + _BODY.replace("{speaker}", html.escape(speaker_id))
            + f"<script>{_script()}</script></body></html>")
