"""Reading one run's timeline back from the report's markup (for the tests)."""

from __future__ import annotations

import re


def run_section(page: str, run_dir: str) -> str:
    """One run's <details> in the report's markup (run_dir: relative to its batch)."""
    start = page.index(f'data-run="{run_dir}"')
    end = page.find('<details class="run"', start)
    return page[start : end if end > 0 else len(page)]


def kinds(section: str) -> list[str]:
    """The timeline's event kinds, in the order the page shows them."""
    return re.findall(r'<li class="ev [^"]*" data-kind="([a-z_]+)"', section)


__all__ = ["kinds", "run_section"]
