"""Check that the built site renders: gallery thumbnails shown, formulas typeset,
no table wider than the column of text it stands in.

Usage: ``python doc/check_rendering.py doc/_build/html`` (``make docs-check``).

The site is served on 127.0.0.1 and opened in headless Chromium. A script injected
into the served pages waits for MathJax, then writes into the page what the browser
actually displays: formulas typeset or left as raw TeX, thumbnails loaded or broken,
tables that overflow their column (whose last columns a reader would have to scroll
to) at a window of WINDOW pixels.
Chromium's ``--dump-dom`` returns that report. Screenshots of the pages go to
``<html>/../screenshots/`` (inside the build directory, out of git) to look at.
Exits with status 1, listing the problems, if anything is missing.
"""

import functools
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import sphinx_gallery

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# Virtual time Chromium grants the page (MathJax loads its fonts and typesets).
BUDGET_MS = 20_000
# A laptop's window, in which the pages are checked.
WINDOW = "--window-size=1280,1600"

REPORT_SCRIPT = b"""<script>
window.addEventListener("load", async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const formulas = [...document.querySelectorAll("span.math, div.math")];
  const thumbs = [...document.querySelectorAll(".sphx-glr-thumbcontainer img")];
  const column = document.querySelector("article") || document.body;
  const wide = [...column.querySelectorAll("table")].filter(
    t => t.getBoundingClientRect().width > column.getBoundingClientRect().width + 1);
  const report = {
    overflowing: wide.map(t => (t.caption ? t.caption.textContent : t.id)
                               .trim().slice(0, 60)),
    formulas: formulas.length,
    typeset: formulas.filter(f => f.querySelector("mjx-container")).length,
    thumbnails: thumbs.map(i => ({src: i.getAttribute("src"),
                                  shown: i.complete && i.naturalWidth > 0})),
  };
  const out = document.createElement("pre");
  out.id = "render-check";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
});
</script></body>"""


class Handler(SimpleHTTPRequestHandler):
    """Serves the site; pages requested with ``?check`` get the report script."""

    def do_GET(self):
        path, _, query = self.path.partition("?")
        if query != "check":
            return super().do_GET()
        page = Path(self.translate_path(path)).read_bytes()
        body = page.replace(b"</body>", REPORT_SCRIPT, 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def chromium(url, *args):
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [shutil.which("chromium") or "chromium", *CHROMIUM_FLAGS,
             f"--user-data-dir={profile}", f"--virtual-time-budget={BUDGET_MS}",
             *args, url],
            capture_output=True, text=True, timeout=180, check=True,
        )
    return result.stdout


def rendered_report(base, page):
    dom = chromium(f"{base}/{page}?check", "--dump-dom", WINDOW)
    found = re.search(r'<pre id="render-check"[^>]*>(.*?)</pre>', dom, re.S)
    if not found:
        return None
    return json.loads(html.unescape(found[1]))


def main(site):
    site = Path(site).resolve()
    shots = site.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    problems = []
    try:
        examples = sorted(EXAMPLES.glob("plot_*.py"))
        gallery = rendered_report(base, "auto_examples/index.html")
        if gallery is None:
            problems.append("gallery: the page did not finish loading")
        else:
            shown = [t for t in gallery["thumbnails"] if t["shown"]]
            placeholder = (Path(sphinx_gallery.__file__).parent / "_static"
                           / "no_image.png").read_bytes()
            blank = [t["src"] for t in shown
                     if (site / "auto_examples" / t["src"]).read_bytes() == placeholder]
            print(f"gallery: {len(shown)} of {len(gallery['thumbnails'])} thumbnails "
                  f"shown, {len(examples)} plot_*.py examples, {len(blank)} blank")
            if len(shown) != len(examples) or len(gallery["thumbnails"]) != len(shown):
                problems.append("gallery: not every example has a visible thumbnail")
            if blank:
                problems.append(f"gallery: examples without a figure: {blank}")
        pages = ["index.html", *sorted(
            str(page.relative_to(site)) for page in site.glob("user_guide/*.html"))]
        total = 0
        for page in pages:
            report = rendered_report(base, page)
            if report is None:
                problems.append(f"{page}: the page did not finish loading")
                continue
            total += report["typeset"]
            print(f"{page}: {report['typeset']} of {report['formulas']} formulas "
                  "typeset by MathJax")
            if report["typeset"] != report["formulas"]:
                problems.append(f"{page}: formulas not typeset by MathJax")
            if report["overflowing"]:
                problems.append(f"{page}: tables wider than the text: "
                                f"{report['overflowing']}")
        if total == 0:
            problems.append("no formula typeset on any page")
        for page, name in [("auto_examples/index.html", "gallery.png"),
                           ("user_guide/framework.html", "user_guide.png"),
                           ("user_guide/theory.html", "theory.png")]:
            chromium(f"{base}/{page}", f"--screenshot={shots / name}", WINDOW)
            print(f"screenshot: {shots / name}")
    finally:
        server.shutdown()
    for problem in problems:
        print("FAILED:", problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "doc/_build/html"))
