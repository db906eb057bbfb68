"""The documentation's rendering checker (``doc/check_rendering.py``, run by ``make
docs-check``) finds each defect it is meant to find, planted in a small page, and
nothing on a page without them.

The image analysis runs everywhere; the page checks render in headless Chromium,
which ``make docs-check`` installs before it runs these tests.
"""

import importlib.util
import shutil
from pathlib import Path

import pytest

plt = pytest.importorskip("matplotlib.pyplot")

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "check_rendering", ROOT / "doc" / "check_rendering.py")
check_rendering = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_rendering)

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="needs headless Chromium")

# A page as the theme lays it out: a column of text 600 pixels wide, code blocks
# that scroll sideways rather than grow.
PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>
body {{ margin: 0; font: 16px sans-serif; }}
article {{ width: 600px; margin: 20px; }}
pre {{ overflow: auto; font: 14px monospace; }}
img {{ max-width: 100%; }}
</style></head><body><article>
<h1>A page</h1>
<p>Some text, then a short code block.</p>
<pre>model = GARegressor().fit(X, y)</pre>
{body}
</article></body></html>
"""


def figure(path, n_axes=2, blank=(), dpi=100):
    """A figure of ``n_axes`` side by side, each with a curve but those in
    ``blank``, which stay as ``plt.subplots`` makes them."""
    fig, axes = plt.subplots(1, n_axes, figsize=(3 * n_axes, 3), squeeze=False)
    for i, ax in enumerate(axes[0]):
        if i not in blank:
            ax.plot([0, 1, 2], [0, 1, 0.5], label="curve")
            ax.set(title=f"panel {i}", xlabel="events")
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


@pytest.mark.parametrize("dpi", [72, 100, 200])
@pytest.mark.parametrize("blank", [(), (1,), (0,), (0, 2)])
def test_blank_panels_found_where_planted(tmp_path, blank, dpi):
    png = figure(tmp_path / "figure.png", n_axes=3, blank=blank, dpi=dpi)
    found = check_rendering.blank_panels(png)
    assert len(found) == len(blank)
    # The panels found are the blank ones, from left to right.
    width = plt.imread(png).shape[1]
    thirds = sorted(int(3 * (left + right) / 2 / width) for left, _, right, _ in found)
    assert thirds == sorted(blank)


def test_blank_panel_of_stacked_axes(tmp_path):
    # Two panels of one column share their horizontal extent: the gap between them,
    # framed above and below by spines but not at its sides, is no panel.
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(4, 5))
    top.plot([0, 1], [1, 0])
    fig.savefig(tmp_path / "stacked.png")
    plt.close(fig)
    found = check_rendering.blank_panels(tmp_path / "stacked.png")
    assert len(found) == 1
    height = plt.imread(tmp_path / "stacked.png").shape[0]
    assert found[0][1] > height / 2  # the lower one


def test_no_blank_panel_in_other_figures(tmp_path):
    # A filled panel with a legend, a scatter of one point and a transparent figure.
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(9, 3))
    left.plot([0, 1], [0, 1], label="a")
    left.legend()
    middle.scatter([0.5], [0.5], s=4)
    right.axhline(0.5, color="0.7")
    fig.savefig(tmp_path / "filled.png", transparent=True)
    plt.close(fig)
    assert check_rendering.blank_panels(tmp_path / "filled.png") == []


def plant_site(tmp_path):
    """A clean page and one page per defect."""
    figure(tmp_path / "full.png")
    figure(tmp_path / "empty_right.png", blank=(1,))
    pages = {
        "clean.html": '<img src="full.png"><pre>print(model.t_)   # 2000</pre>',
        "blank.html": '<img src="empty_right.png">',
        "repr.html": '<pre class="sphx-glr-script-out">'
                     "&lt;matplotlib.legend.Legend object at 0x7f3a2c1d5e50&gt;</pre>",
        "wide.html": "<pre>" + "errors.append(abs(model.predict(x_t)[0] - y_t[0]))"
                     " " * 3 + "# one row, a float64 array, and more</pre>",
    }
    for name, body in pages.items():
        (tmp_path / name).write_text(PAGE.format(body=body), encoding="utf-8")
    return sorted(pages)


@needs_chromium
def test_checker_catches_each_planted_defect(tmp_path):
    pages = plant_site(tmp_path)
    with check_rendering.serve(tmp_path) as base:
        problems, _ = check_rendering.check_pages(base, tmp_path, pages)
    by_page = {page: [p for p in problems if p.startswith(page + ":")]
               for page in pages}
    assert by_page["clean.html"] == []
    assert len(by_page["blank.html"]) == 1
    assert "axes without data in empty_right.png" in by_page["blank.html"][0]
    assert len(by_page["repr.html"]) == 1
    assert "object reprs" in by_page["repr.html"][0]
    assert "Legend object at 0x7f3a2c1d5e50" in by_page["repr.html"][0]
    assert len(by_page["wide.html"]) == 1
    assert "code blocks wider than the text" in by_page["wide.html"][0]
    assert len(problems) == 3


@needs_chromium
def test_wrapped_code_block_passes(tmp_path):
    # The same long line, wrapped by the page's style, is shown whole.
    long_line = "x = [" + ", ".join(str(i) for i in range(60)) + "]"
    body = f'<pre style="white-space: pre-wrap">{long_line}</pre>'
    (tmp_path / "wrapped.html").write_text(PAGE.format(body=body), encoding="utf-8")
    with check_rendering.serve(tmp_path) as base:
        problems, _ = check_rendering.check_pages(base, tmp_path, ["wrapped.html"])
    assert problems == []
