"""Links in README.md and docs/*.md resolve, on GitHub's repository pages and on the built site (no network).

A relative link must name a file that exists next to the page (as GitHub resolves it), and a ``#fragment``
an anchor GitHub keeps: a heading's slug or an explicit ``<a id="...">`` (an attribute list ``{#x}`` makes an
anchor on the site only). Pages the site generates at build time (``claims.md``, ``api/*.md``, and
``tutorials/NAME.ipynb`` from ``examples/NAME.ipynb``, see docs/hooks/softpolar_docs.py) exist on the site
only; for a tutorial the notebook in examples/ must exist. ``mkdocs build --strict`` checks the site side.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: performance.md is generated in part from bench reports (its owner checks it with the bench)
# (outside the checkout, as in the wheel stage of .ci/run that copies tests/ only, there are no pages: nothing to run)
PAGES = [p for p in [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "performance.md")]
         if p.is_file()]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    out = {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}
    return out | set(re.findall(r'<a (?:id|name)="([^"]+)"', text))


def _generated(page: Path, path: str) -> bool:
    try:
        rel = (page.parent / path).resolve().relative_to(ROOT.resolve()).as_posix()
    except ValueError:  # outside the checkout (the control's pages)
        return False
    if rel.startswith("docs/tutorials/"):
        assert (ROOT / "examples" / Path(rel).name).is_file(), f"{page.name}: {path}: no such notebook in examples/"
        return True
    return rel == "docs/claims.md" or rel.startswith("docs/api/")


def broken_links(page: Path) -> list:
    bad = []
    text = _CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    for m in _LINK.finditer(text):
        url = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", url):  # http(s), mailto: not followed (no network)
            continue
        path, _, frag = url.partition("#")
        if path and _generated(page, path):
            continue
        target = (page.parent / path) if path else page
        if not target.exists():
            bad.append(f"{page.name}: {url} (no such file)")
        elif frag and target.suffix == ".md" and frag not in anchors(target):
            bad.append(f"{page.name}: {url} (no anchor {frag!r} that GitHub keeps)")
    return bad


def test_checker_finds_a_broken_link(tmp_path):
    """The negative control: a missing file and a site-only anchor are both reported."""
    (tmp_path / "b.md").write_text("## Real heading {#site-only}\n")
    page = tmp_path / "a.md"
    page.write_text("[x](b.md#real-heading-site-only) [y](b.md#site-only) [z](c.md) [w](https://e.org)\n")
    bad = broken_links(page)
    assert len(bad) == 2 and "site-only" in bad[0] and "c.md" in bad[1]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_links_resolve(page):
    assert broken_links(page) == []
