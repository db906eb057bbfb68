"""Check that the built site renders: gallery thumbnails shown, formulas typeset,
tables and code that fit their column, figures without empty axes, no object repr
printed into a page.

Usage: ``python doc/check_rendering.py doc/_build/html`` (``make docs-check``).

The site is served on 127.0.0.1 and opened in headless Chromium. A script injected
into the served pages waits for MathJax, then writes into the page what the browser
actually displays at a window of WINDOW pixels: formulas typeset or left as raw TeX,
thumbnails loaded or broken, tables wider than their column (whose last columns a
reader would have to scroll to), code blocks whose lines are clipped, the images
shown, and text such as ``<matplotlib.legend.Legend object at 0x7f...>``, the repr
that a gallery example prints when a code block ends with an expression.
Chromium's ``--dump-dom`` returns that report. The figures shown are then read as
pixels: an axes frame with nothing inside is a panel drawn before its data (a figure
captured at the end of one code block and filled in the next).
Screenshots of the pages go to ``<html>/../screenshots/`` (inside the build
directory, out of git) to look at.
Exits with status 1, listing the problems, if anything is missing.
"""

import contextlib
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
from urllib.parse import unquote

import numpy as np
from matplotlib.image import imread

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
# Pages of the site that are not the project's text.
GENERATED_PAGES = {"genindex.html", "search.html", "py-modindex.html"}

# Spines of an axes frame: runs of dark pixels (matplotlib draws them black) at
# least MIN_SPINE pixels long, a tick up to TICK pixels long at their ends; what
# lies within MARGIN pixels of them (ticks drawn inwards, antialiasing) is not the
# inside of the panel.
DARK = 0.35
MIN_SPINE = 40
MARGIN = 6
TICK = 16

REPORT_SCRIPT = b"""<script>
window.addEventListener("load", async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const formulas = [...document.querySelectorAll("span.math, div.math")];
  const thumbs = [...document.querySelectorAll(".sphx-glr-thumbcontainer img")];
  const column = document.querySelector("article") || document.body;
  const right = column.getBoundingClientRect().right;
  const wide = [...column.querySelectorAll("table")].filter(
    t => t.getBoundingClientRect().width > column.getBoundingClientRect().width + 1);
  const clipped = [...column.querySelectorAll("pre")].filter(
    p => p.scrollWidth > p.clientWidth + 1
         || p.getBoundingClientRect().right > right + 1);
  const longest = p => p.textContent.split("\\n").reduce(
    (a, b) => (b.length > a.length ? b : a), "");
  const report = {
    overflowing: wide.map(t => (t.caption ? t.caption.textContent : t.id)
                               .trim().slice(0, 60)),
    clipped: clipped.map(p => longest(p).trim().slice(0, 60)),
    reprs: column.innerText.match(/<[\\w.]+ object at 0x[0-9a-fA-F]+>/g) || [],
    images: [...column.querySelectorAll("img")]
      .filter(i => i.complete && i.naturalWidth > 0)
      .map(i => new URL(i.src).pathname),
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


@contextlib.contextmanager
def serve(site):
    """Serve the folder ``site`` on 127.0.0.1 for as long as the block runs; yields
    its base URL."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


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


def _runs(mask):
    """The runs of True along each row of ``mask`` at least MIN_SPINE long, as
    ``(row, start, stop)``."""
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    steps = np.diff(padded, axis=1)
    # Row-major order pairs each run's start with its stop.
    starts, stops = np.argwhere(steps == 1), np.argwhere(steps == -1)
    return [(row, start, stop)
            for (row, start), (_, stop) in zip(starts, stops, strict=True)
            if stop - start >= MIN_SPINE]


def _lines(rows):
    """Rows of one horizontal extent grouped into lines (adjacent rows are one
    thick line), as ``(first, last)``."""
    groups = [[rows[0], rows[0]]]
    for row in rows[1:]:
        if row == groups[-1][1] + 1:
            groups[-1][1] = row
        else:
            groups.append([row, row])
    return groups


def blank_panels(path):
    """The axes frames of a figure image with nothing drawn inside them.

    A frame is two horizontal dark lines of the same extent joined by dark columns
    at both ends (the four spines); its inside, MARGIN pixels away from them, is
    blank if every pixel has the colour of the axes' face.

    Parameters
    ----------
    path : str or Path
        A PNG image.

    Returns
    -------
    list of tuple
        ``(left, top, right, bottom)`` in pixels, one per blank panel.
    """
    image = imread(path)
    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=2)
    rgb = image[..., :3].astype(float)
    if image.shape[2] == 4:
        # The page shows a transparent figure on white.
        alpha = image[..., 3:].astype(float)
        rgb = rgb * alpha + (1 - alpha)
    dark = rgb.mean(axis=2) < DARK
    extents = {}
    for row, start, stop in _runs(dark):
        # Antialiasing may move an end of a spine by a pixel.
        key = next((k for k in extents
                    if abs(k[0] - start) <= 2 and abs(k[1] - stop) <= 2),
                   (start, stop))
        extents.setdefault(key, []).append(row)
    blank = []
    for (left, right), rows in extents.items():
        lines = _lines(sorted(rows))
        for (_, top), (bottom, _) in zip(lines[:-1], lines[1:], strict=True):
            if bottom - top <= 2 * MARGIN:
                continue
            # The side spines, within TICK pixels of the ends of the line (which
            # the outward ticks at the top and bottom rows extend).
            frame = dark[top:bottom + 1, left:right]
            spines = np.flatnonzero(frame.mean(axis=0) >= 0.9)
            if not (len(spines) and spines[0] < TICK
                    and spines[-1] >= right - left - TICK):
                continue  # no side spines: the gap between two panels
            inside = rgb[top + MARGIN:bottom - MARGIN + 1,
                         left + spines[0] + MARGIN:left + spines[-1] - MARGIN + 1]
            face = np.median(inside.reshape(-1, 3), axis=0)
            if np.abs(inside - face).max() < 0.02:
                blank.append((int(left), int(top), int(right), int(bottom)))
    return blank


def check_pages(base, site, pages):
    """Render each page and list what a reader would find wrong on it.

    Parameters
    ----------
    base : str
        The URL the site is served at (see :func:`serve`).
    site : Path
        The folder served, to read the images shown.
    pages : list of str
        Paths of the pages, relative to ``site``.

    Returns
    -------
    problems : list of str
        One line per problem, naming the page.
    typeset : int
        The number of formulas typeset on these pages.
    """
    problems, typeset = [], 0
    for page in pages:
        report = rendered_report(base, page)
        if report is None:
            problems.append(f"{page}: the page did not finish loading")
            continue
        typeset += report["typeset"]
        print(f"{page}: {report['typeset']} of {report['formulas']} formulas "
              f"typeset, {len(report['images'])} images")
        if report["typeset"] != report["formulas"]:
            problems.append(f"{page}: formulas not typeset by MathJax")
        if report["overflowing"]:
            problems.append(f"{page}: tables wider than the text: "
                            f"{report['overflowing']}")
        if report["clipped"]:
            problems.append(f"{page}: code blocks wider than the text, lines "
                            f"clipped: {report['clipped']}")
        if report["reprs"]:
            problems.append(f"{page}: object reprs printed into the page: "
                            f"{report['reprs']}")
        for src in report["images"]:
            image = site / unquote(src).lstrip("/")
            if image.suffix.lower() == ".png" and blank_panels(image):
                problems.append(f"{page}: axes without data in {image.name}")
    return problems, typeset


def check_gallery(base, site):
    """The gallery's index shows a thumbnail of a figure for every example."""
    import sphinx_gallery

    examples = sorted(EXAMPLES.glob("plot_*.py"))
    gallery = rendered_report(base, "auto_examples/index.html")
    if gallery is None:
        return ["gallery: the page did not finish loading"]
    shown = [t for t in gallery["thumbnails"] if t["shown"]]
    placeholder = (Path(sphinx_gallery.__file__).parent / "_static"
                   / "no_image.png").read_bytes()
    blank = [t["src"] for t in shown
             if (site / "auto_examples" / t["src"]).read_bytes() == placeholder]
    print(f"gallery: {len(shown)} of {len(gallery['thumbnails'])} thumbnails "
          f"shown, {len(examples)} plot_*.py examples, {len(blank)} blank")
    problems = []
    if len(shown) != len(examples) or len(gallery["thumbnails"]) != len(shown):
        problems.append("gallery: not every example has a visible thumbnail")
    if blank:
        problems.append(f"gallery: examples without a figure: {blank}")
    return problems


def main(site):
    site = Path(site).resolve()
    shots = site.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    pages = sorted(
        str(page.relative_to(site))
        for folder in ("", "user_guide/", "developers/", "auto_examples/")
        for page in site.glob(f"{folder}*.html")
        if page.name not in GENERATED_PAGES)
    with serve(site) as base:
        problems = check_gallery(base, site)
        found, typeset = check_pages(base, site, pages)
        problems += found
        if typeset == 0:
            problems.append("no formula typeset on any page")
        for page, name in [("auto_examples/index.html", "gallery.png"),
                           ("auto_examples/plot_river_streams.html", "river.png"),
                           ("user_guide/streaming.html", "streaming.png"),
                           ("benchmarks.html", "benchmarks.png"),
                           ("user_guide/theory.html", "theory.png")]:
            chromium(f"{base}/{page}", f"--screenshot={shots / name}", WINDOW)
            print(f"screenshot: {shots / name}")
    for problem in problems:
        print("FAILED:", problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "doc/_build/html"))
