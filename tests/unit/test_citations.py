"""The repository stands on its own: code and docs cite its docs (docs/formats.md,
docs/security.md, docs/architecture.md) by section, never a design document or an issue tracker
it does not hold, and every section they cite exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("formats", "security", "architecture")
OUTSIDE = re.compile(r"\b" + "SP" + r"EC\b|\b[Ii]ssues? \d+\b")
"""A citation of the agreed design document or of an issue by number (built so this file does
not match itself)."""
SECTION = re.compile(r'docs/(formats|security|architecture)\.md,\s+"([^"]+)"')
RULE = re.compile(r"docs/security\.md,\s+the proxy's\s+rules?\s+(\d+)(?:\s+and\s+(\d+))?")


def _tracked_text() -> dict[str, str]:
    try:
        names = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    out = {}
    for name in names:
        path = ROOT / name
        if path.suffix not in {".py", ".md", ".toml", ".sh", ".yaml", ".yml", ".txt", ""}:
            continue
        try:
            out[name] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _sections(doc: str) -> list[str]:
    """A doc's headings and the openings of its paragraphs and table rows (a citation may name
    a paragraph: "Body parsing"), lower-cased, markup stripped."""
    text = (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")
    return [line.lstrip('#|*"` ').lower() for line in text.splitlines() if line.strip()]


def test_nothing_cites_a_document_or_an_issue_the_repository_does_not_hold() -> None:
    found = [
        f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for name, text in _tracked_text().items()
        for m in OUTSIDE.finditer(text)
    ]
    assert found == []


def test_every_cited_section_of_the_docs_exists() -> None:
    sections = {doc: _sections(doc) for doc in DOCS}
    rules = set(re.findall(r"^\*\*(\d+)\. ", (ROOT / "docs/security.md").read_text(), re.M))
    missing, cited = [], 0
    for name, text in _tracked_text().items():
        flat = " ".join(text.split())
        for doc, section in SECTION.findall(flat):
            cited += 1
            if not any(line.startswith(section.lower()) for line in sections[doc]):
                missing.append(f'{name}: docs/{doc}.md, "{section}"')
        for numbers in RULE.findall(flat):
            cited += 1
            missing += [f"{name}: the proxy's rule {n}" for n in numbers if n and n not in rules]
    assert cited > 40 and missing == []
