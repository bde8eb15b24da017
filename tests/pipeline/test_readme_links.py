"""Every relative link of the README resolves in a clone: a file or directory of the
repository (the design documents live in docs/), or a heading of the README itself."""
from __future__ import annotations

import re

from .helpers import ROOT

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]", lambda m: "_" if m.group(0) == "_" else "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _links(path):
    text = path.read_text()
    code = re.sub(r"```.*?```", "", text, flags=re.S)
    return [m.group(1) for m in LINK.finditer(code)]


def _anchors(path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", path.read_text(), re.M)}


def test_every_relative_link_of_the_readme_resolves():
    readme = ROOT / "README.md"
    links = [l for l in _links(readme) if not re.match(r"^[a-z]+:", l)]
    assert links, "the README has relative links"
    for link in links:
        target, _, anchor = link.partition("#")
        path = (readme.parent / target).resolve() if target else readme
        assert path.exists(), f"README link {link!r}: {path} does not exist"
        assert ROOT in path.parents or path == ROOT, f"README link {link!r} leaves the repository"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"README link {link!r}: no heading #{anchor}"


def test_the_readme_needs_nothing_outside_the_repository():
    text = (ROOT / "README.md").read_text()
    assert "shared/spec" not in text and "../" not in text
    for doc in ("ARCHITECTURE.md", "EXPERIMENTS.md"):
        assert f"](docs/{doc})" in text and (ROOT / "docs" / doc).is_file()


def test_the_design_documents_link_within_docs():
    for doc in (ROOT / "docs").glob("*.md"):
        for link in _links(doc):
            if not re.match(r"^[a-z]+:", link):
                assert (doc.parent / link.partition("#")[0]).exists(), (doc.name, link)
