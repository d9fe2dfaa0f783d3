"""Headless Chromium for the report tests: Debian's ``chromium`` and ``chromium-driver`` (apt),
driven by selenium (PyPI). Nothing is fetched: the driver and browser paths are given, so
Selenium Manager never runs.

Use::

    from browser import chromium, open_page, audio_durations, screenshot

    with chromium() as driver:
        errors = open_page(driver, out / "report.html")   # console errors, [] when clean
        assert errors == []
        screenshot(driver, tmp_path / "report.png")
"""

from __future__ import annotations

import base64
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def need_chromium() -> None:
    """Skip (a failure under RIG_STRICT=1 in an integration module) when chromium, its driver
    or selenium is missing."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("chromium and chromium-driver (apt) are needed for the browser tests")
    pytest.importorskip("selenium", reason="selenium (pip, the test extra) is needed")


@contextmanager
def chromium(width: int = 1280, height: int = 900, extra_args: tuple[str, ...] = ()):
    """A headless Chromium at ``width`` x ``height`` CSS pixels, with ``extra_args`` (a fake
    microphone, for instance); quits on exit."""
    need_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--mute-audio",
                "--autoplay-policy=no-user-gesture-required", "--allow-file-access-from-files",
                *extra_args):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver, path: Path, timeout_s: float = 30.0) -> list[str]:
    """Load ``path`` from ``file://``, wait until the document is complete, and return the
    console's error lines (level SEVERE: script errors, failed loads); ``[]`` when clean.
    A missing file is an AssertionError (Chromium shows its own error page, with no console
    error)."""
    if not Path(path).is_file():
        raise AssertionError(f"{path}: no such file")
    driver.get(Path(path).resolve().as_uri())
    deadline = time.monotonic() + timeout_s
    while driver.execute_script("return document.readyState") != "complete":
        if time.monotonic() > deadline:
            raise AssertionError(f"{path}: not loaded within {timeout_s} s")
        time.sleep(0.1)
    return console_errors(driver)


def set_viewport(driver, width: int, height: int = 844) -> None:
    """Emulate a ``width`` x ``height`` CSS-pixel viewport (a phone below ~500 px, where a
    headless desktop window stops shrinking); mobile when ``width`` < 500."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})


def console_errors(driver) -> list[str]:
    """Console lines of level SEVERE since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


_DURATIONS_JS = """
const done = arguments[arguments.length - 1];
const els = Array.from(document.querySelectorAll('audio'));
const wait = el => new Promise(resolve => {
  const out = () => resolve({src: el.currentSrc || el.src ||
                             (el.querySelector('source') || {}).src || '',
                             duration_s: isFinite(el.duration) ? el.duration : null,
                             error: el.error ? el.error.code : null});
  if (el.readyState >= 1 || el.error) { out(); return; }
  el.addEventListener('loadedmetadata', out, {once: true});
  el.addEventListener('error', out, {once: true});
  el.preload = 'metadata';
  el.load();
});
Promise.all(els.map(wait)).then(done);
"""


def audio_durations(driver, timeout_s: float = 60.0) -> list[dict]:
    """Every ``<audio>`` element on the page, loaded: ``[{src, duration_s, error}]`` with
    ``duration_s`` in seconds (``None`` when it did not load) and ``error`` the
    MediaError code or ``None``."""
    driver.set_script_timeout(timeout_s)
    return driver.execute_async_script(_DURATIONS_JS)


def screenshot(driver, path: Path, full_page: bool = True) -> Path:
    """Write a PNG of the page (the whole page height when ``full_page``) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if full_page:
        shot = driver.execute_cdp_cmd("Page.captureScreenshot",
                                      {"format": "png", "captureBeyondViewport": True})
        path.write_bytes(base64.b64decode(shot["data"]))
    else:
        driver.save_screenshot(str(path))
    return path


_LAYOUT_JS = """
const vw = window.innerWidth, inside = (r, b) => r.width === 0 && r.height === 0 ||
  (r.left >= b.left - 1 && r.right <= b.right + 1);
const shown = e => e.getClientRects().length > 0;
const out = {inner_w: vw, scroll_w: document.documentElement.scrollWidth, tables: [],
             plots: []};
for (const t of document.querySelectorAll('.table-wrap, table')) {
  if (!shown(t) || t.closest('.table-wrap') !== t && t.closest('.table-wrap')) continue;
  out.tables.push({what: (t.querySelector('caption') || t).textContent.slice(0, 60),
                   scroll_w: t.scrollWidth, client_w: t.clientWidth});
}
for (const s of document.querySelectorAll('figure svg')) {
  if (!shown(s)) continue;
  const wrap = s.closest('.fig-wrap') || s.parentElement;
  const w = wrap.getBoundingClientRect(), r = s.getBoundingClientRect();
  const box = {left: Math.max(w.left, r.left, 0), right: Math.min(w.right, r.right, vw)};
  const scale = r.width / (s.viewBox.baseVal.width || r.width);
  const marks = Array.from(s.querySelectorAll('.dot, line.zero'));
  const texts = Array.from(s.querySelectorAll('text'));
  out.plots.push({id: (s.closest('figure') || {}).id || '', cls: s.getAttribute('class'),
    width_px: r.width, n_dots: s.querySelectorAll('.dot').length,
    n_zero: s.querySelectorAll('line.zero').length,
    marks_outside: marks.filter(m => !inside(m.getBoundingClientRect(), box)).length,
    texts_outside: texts.filter(t => !inside(t.getBoundingClientRect(), box))
                        .map(t => t.textContent),
    min_text_px: Math.min(...texts.map(t => scale *
                                       parseFloat(getComputedStyle(t).fontSize))),
    wrap_scrolls: wrap.scrollWidth > wrap.clientWidth + 1});
}
return out;
"""


def layout_facts(driver) -> dict:
    """What a reader sees of the page's width: ``inner_w`` (the window's, CSS px),
    ``scroll_w`` (the document's), ``tables`` (each shown table box: ``what``, ``scroll_w``,
    ``client_w``) and ``plots`` (each shown ``figure svg``: ``id``, ``cls``, ``width_px``,
    ``n_dots`` and ``n_zero`` (its ``.dot`` markers and ``line.zero``), ``marks_outside``
    (how many of them lie outside the visible part of the plot: the page, its scroll box and
    the svg), ``texts_outside`` (the texts that do), ``min_text_px`` (its smallest text as
    shown, CSS px), ``wrap_scrolls`` (its box scrolls sideways))."""
    return driver.execute_script(_LAYOUT_JS)


def screenshot_dir(default: Path) -> Path:
    """Where a test writes screenshots for a person to look at: ``$RIG_SCREENSHOTS`` when
    set, else ``default``."""
    return Path(os.environ.get("RIG_SCREENSHOTS") or default)
