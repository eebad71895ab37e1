"""Who ran a run and which task, read from its directory's path when run-meta.json cannot be.

The reference's layout (docs/formats.md, "The run directory"; proxy_addon/records/layout.py) names
every run `<batch>/<safe_model>/<harness>-<case>-<safe_model>-<YYYYmmdd-HHMMSS>[-N]/`, so a run
whose run-meta.json is truncated or corrupt still says its model, harness, case and start time.
Without this, such a run fell into a made-up (unknown, unknown) entry: with --tasks that entry added
a whole corpus to N and its real entry listed the task as missing.

`<harness>-<case>` is split on a hyphen, and both halves may hold hyphens (claude-code,
v2-001-shop), so the split is chosen by evidence: a harness that readable runs of the batch name,
then a case that is a corpus slug, else the first hyphen.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from proxy_addon.records.runmeta import safe_model


@dataclass(frozen=True, slots=True)
class PathIdentity:
    model: str
    harness: str
    case: str
    timestamp: str


def _split(head: str, harnesses: Collection[str], slugs: Collection[str]) -> tuple[str, str]:
    splits = [(head[:i], head[i + 1 :]) for i, c in enumerate(head) if c == "-"]
    splits = [(h, c) for h, c in splits if h and c]
    if not splits:
        raise ValueError(head)
    for wanted in (
        lambda h, c: h in harnesses and c in slugs,
        lambda h, c: h in harnesses,
        lambda h, c: c in slugs,
    ):
        hits = [s for s in splits if wanted(*s)]
        if hits:
            return max(hits, key=lambda s: len(s[0]) if s[0] in harnesses else len(s[1]))
    return splits[0]


def parse_run_dir(
    name: str,
    parent: str,
    *,
    models: Iterable[str] = (),
    harnesses: Collection[str] = (),
    slugs: Collection[str] = (),
) -> PathIdentity | None:
    """The identity a run directory's name gives, or None when it does not fit the layout.

    name is the run directory's name, parent its parent's (the safe model name). models are the
    model names readable runs of the batch carry: the one whose safe name is parent is the model
    (the safe name itself when none or several are).
    """
    pattern = rf"(?P<head>.+)-{re.escape(parent)}-(?P<ts>\d{{8}}-\d{{6}})(?:-\d+)?"
    m = re.fullmatch(pattern, name)
    if m is None or not parent:
        return None
    try:
        harness, case = _split(m["head"], harnesses, slugs)
    except ValueError:
        return None
    named = {model for model in models if safe_model(model) == parent}
    model = named.pop() if len(named) == 1 else parent
    return PathIdentity(model, harness, case, m["ts"])


__all__ = ["PathIdentity", "parse_run_dir"]
