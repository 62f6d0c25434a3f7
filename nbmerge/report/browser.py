"""Open a report in headless Chromium and record what the page did: network requests, typeset math, figures.

Talks the DevTools protocol over ``--remote-debugging-pipe`` (fd 3 in, fd 4 out, NUL-separated JSON), so
it needs no websocket library and no open port. Only the page's own requests are recorded (Chromium's
background services make requests of their own; those are not the report's). Flags: docs/environment.md.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import NbmergeError

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--remote-debugging-pipe")

# Evaluated in the page once loaded: waits for MathJax 2.7's queue to drain (if MathJax is on the page).
_MATH_DONE = """new Promise(resolve => {
  if (!window.MathJax || !MathJax.Hub) { resolve('no-mathjax'); return; }
  MathJax.Hub.Queue(() => resolve('typeset'));
})"""

_PAGE_FACTS = """(() => {
  const text = document.body ? document.body.innerText : '';
  const raw = text.match(/\\$\\$[^$]+\\$\\$|\\$[^$\\n]+\\$/g) || [];
  const imgs = Array.from(document.images);
  return JSON.stringify({
    title: document.title,
    math_elements: document.querySelectorAll('.MathJax, .MathJax_Display, .MathJax_CHTML, mjx-container').length,
    raw_tex: raw.slice(0, 10),
    // the output's font: the configured web font, or a fallback (image fonts, local or generic Unicode glyphs)
    math_fallback: (() => {
      const out = window.MathJax && MathJax.OutputJax && MathJax.OutputJax['HTML-CSS'];
      if (!out || !document.querySelector('.MathJax')) return '';
      return (out.fontInUse !== 'STIX-Web' || out.imgFonts) ? String(out.fontInUse) + (out.imgFonts ? ' (image fonts)' : '') : '';
    })(),
    // MathJax 2.7 shows a TeX error as an merror box or, with the noErrors/noUndefined extensions the reports load,
    // as red source text (an undefined macro prints its own name in red): both are errors on the page
    tex_errors: Array.from(document.querySelectorAll('.mjx-merror, .merror, .MathJax_Error, .noError'))
      .concat(Array.from(document.querySelectorAll('.MathJax_CHTML *, .MathJax *, .MathJax_SVG *'))
        .filter(e => e.children.length === 0 && getComputedStyle(e).color === 'rgb(255, 0, 0)'))
      .map(e => e.textContent.trim()).slice(0, 5),
    images: imgs.length,
    images_decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    // a figure without a description: no alt, an empty one, or nbconvert's placeholder
    images_without_alt: imgs.filter(i => !(i.getAttribute('alt') || '').trim()
      || (i.getAttribute('alt') || '').includes('No description has been provided')).length,
    links: Array.from(document.links).map(a => a.getAttribute('href')),
    // what could run script: <script> elements that JavaScript would execute (math/tex and MathJax's config are
    // data to it), inline event handlers (onerror=...) and javascript: URLs, wherever they are on the page
    scripts: Array.from(document.scripts)
      .filter(s => !s.type || /^(module|(text|application)\\/(x-)?(java|ecma|j|live)script)$/i.test(s.type.trim()))
      .map(s => s.src || ('inline: ' + s.textContent.trim().slice(0, 60))),
    handlers: Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)
      .filter(a => /^on/i.test(a.name) || /^\\s*javascript:/i.test(a.value))
      .map(a => `<${e.tagName.toLowerCase()} ${a.name}="${a.value.slice(0, 40)}">`)).slice(0, 10),
    text_length: text.length,
  });
})()"""


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise NbmergeError("headless Chromium is not installed: `make system-deps` installs Debian's `chromium`")


@dataclass
class PageVisit:
    url: str
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)     # requests that failed ("url: net::ERR_FILE_NOT_FOUND")
    facts: dict = field(default_factory=dict)
    math: str = ""
    screenshot: Optional[Path] = None

    @property
    def network_requests(self) -> list[str]:
        """Requests that would leave the machine (anything but file: and data: URLs)."""
        return [u for u in self.requests if not u.startswith(("file:", "data:", "about:", "blob:"))]


class _Pipe:
    def __init__(self, proc, to_browser: int, from_browser: int):
        self.proc, self.out, self.inp = proc, to_browser, from_browser
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: Optional[dict] = None, session: Optional[str] = None,
             timeout: float = 60.0) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            for msg in self._read(deadline):
                if msg.get("id") == self.next_id:
                    if "error" in msg:
                        raise NbmergeError(f"Chromium: {method} failed: {msg['error']}")
                    return msg.get("result", {})
                self.events.append(msg)

    def _read(self, deadline: float) -> list[dict]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NbmergeError("Chromium did not answer in time")
        ready, _, _ = select.select([self.inp], [], [], remaining)
        if not ready:
            raise NbmergeError("Chromium did not answer in time")
        chunk = os.read(self.inp, 1 << 20)
        if not chunk:
            raise NbmergeError(f"Chromium exited (code {self.proc.poll()})")
        self.buffer += chunk
        *messages, self.buffer = self.buffer.split(b"\0")
        return [json.loads(m) for m in messages if m]


def visit(path: str | os.PathLike, screenshot: Optional[str | os.PathLike] = None, width: int = 1280,
          height: int = 900, timeout: float = 60.0) -> PageVisit:
    """Load a local HTML file, let its scripts (MathJax) finish, and return what happened."""
    with chromium_pipe(width, height) as pipe:
        return _drive(pipe, Path(path).resolve().as_uri(), screenshot, timeout)


@contextmanager
def chromium_pipe(width: int = 1280, height: int = 900):
    """A headless Chromium with a fresh profile, driven over the DevTools pipe; closed on exit."""
    chromium = find_chromium()
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()

    def wire_fds():  # the DevTools pipe is fds 3 (commands in) and 4 (answers out) in the child
        # Move both ends above 4 first, so neither dup2 can clobber the other.
        high_r, high_w = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.dup2(high_r, 3)
        os.dup2(high_w, 4)

    with tempfile.TemporaryDirectory(prefix="nbmerge-chromium-") as profile:
        proc = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                                 "about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=wire_fds, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        pipe = _Pipe(proc, to_browser_w, from_browser_r)
        try:
            yield pipe
        finally:
            try:
                pipe.send("Browser.close", timeout=5)
            except NbmergeError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(to_browser_w)
            os.close(from_browser_r)


def open_page(pipe: _Pipe, url: str, timeout: float = 60.0) -> str:
    """A new tab at ``url``, loaded; its DevTools session id (network, page and runtime events on)."""
    target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    pipe.send("Network.enable", session=session)
    pipe.send("Page.enable", session=session)
    pipe.send("Runtime.enable", session=session)
    pipe.send("Page.navigate", {"url": url}, session=session)
    deadline = time.monotonic() + timeout
    while not any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session for e in pipe.events):
        pipe.events.extend(pipe._read(deadline))
    return session


def evaluate(pipe: _Pipe, session: str, expression: str, timeout: float = 60.0, await_promise: bool = False):
    """The value of a JavaScript expression in the page (JSON-serialisable results only)."""
    answer = pipe.send("Runtime.evaluate", {"expression": expression, "awaitPromise": await_promise,
                                            "returnByValue": True}, session=session, timeout=timeout)
    if "exceptionDetails" in answer:
        raise NbmergeError(f"Chromium: {expression[:60]!r} failed: {answer['exceptionDetails'].get('text', '')} "
                           f"{answer['exceptionDetails'].get('exception', {}).get('description', '')}")
    return answer["result"].get("value")


def _drive(pipe: _Pipe, url: str, screenshot, timeout: float) -> PageVisit:
    session = open_page(pipe, url, timeout)
    math = pipe.send("Runtime.evaluate", {"expression": _MATH_DONE, "awaitPromise": True, "returnByValue": True},
                     session=session, timeout=timeout)["result"].get("value", "")
    facts = json.loads(pipe.send("Runtime.evaluate", {"expression": _PAGE_FACTS, "returnByValue": True},
                                 session=session)["result"]["value"])
    result = PageVisit(url=url, facts=facts, math=math)
    if screenshot is not None:
        data = pipe.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False},
                         session=session)["data"]
        Path(screenshot).write_bytes(base64.b64decode(data))
        result.screenshot = Path(screenshot)
    # data: URLs (embedded figures) are shortened: the scheme is what matters, not the payload.
    sent = [e["params"] for e in pipe.events
            if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session]
    result.requests = [p["request"]["url"][:80] if p["request"]["url"].startswith("data:") else p["request"]["url"]
                       for p in sent]
    urls = {p["requestId"]: p["request"]["url"] for p in sent}
    result.failed = [f"{_short(urls.get(e['params']['requestId'], '?'))}: {e['params'].get('errorText', '')}"
                     for e in pipe.events if e.get("method") == "Network.loadingFailed"
                     and e.get("sessionId") == session and not e["params"].get("canceled")
                     and not urls.get(e["params"]["requestId"], "").startswith("about:")]
    return result


def _short(url: str) -> str:
    """A request's URL for a message: data: payloads cut, local files by their last three path parts."""
    if url.startswith("data:"):
        return url[:40]
    if url.startswith("file:"):
        return ".../" + "/".join(url.split("?")[0].split("/")[-3:])
    return url[:120]


def _shipped_script(src: str) -> bool:
    """A report runs one script of its own: MathJax from the copy beside the reports (its files load their
    extensions the same way); every other script, inline or not, came from somewhere else."""
    return src.startswith("file:") and "/_static/mathjax/" in src


def page_problems(visit_result: PageVisit) -> list[str]:
    """What makes a rendered report unfit to read offline: remote requests, raw TeX or TeX errors, figures that do
    not load, script the report did not ship."""
    facts = visit_result.facts
    problems = []
    if visit_result.network_requests:
        problems.append(f"requests leaving the machine: {visit_result.network_requests[:3]}")
    if visit_result.failed:  # e.g. a MathJax font or its metrics missing: formulas drawn with fallback glyphs
        problems.append(f"{len(visit_result.failed)} requested files did not load: {visit_result.failed[:3]}")
    if facts.get("math_fallback"):
        problems.append(f"formulas typeset with a fallback font: {facts['math_fallback']}")
    if facts.get("raw_tex"):
        problems.append(f"untypeset math: {facts['raw_tex'][:3]}")
    if facts.get("tex_errors"):
        problems.append(f"TeX errors: {facts['tex_errors'][:3]}")
    foreign = [s for s in facts.get("scripts", []) if not _shipped_script(s)] + facts.get("handlers", [])
    if foreign:  # e.g. a name from the user's folders written into a table as HTML
        problems.append(f"{len(foreign)} scripts the report did not ship: {foreign[:3]}")
    if facts.get("images_decoded", 0) != facts.get("images", 0):
        problems.append(f"{facts['images'] - facts['images_decoded']} of {facts['images']} images did not load")
    if facts.get("images_without_alt", 0):
        problems.append(f"{facts['images_without_alt']} of {facts['images']} figures have no alt text saying what "
                        "they show")
    return problems


def check_pages(paths, screenshots: Optional[Path] = None) -> dict[str, list[str]]:
    """Open each page in headless Chromium; map page → problems (empty when the page is fine)."""
    out = {}
    if screenshots:
        screenshots.mkdir(parents=True, exist_ok=True)
    for path in paths:
        path = Path(path)
        shot = screenshots / f"{path.stem}.png" if screenshots else None
        out[str(path)] = page_problems(visit(path, screenshot=shot))
    return out
