"""Each package says in its `__init__` what the others may use (`__all__`), and the product's
packages import each other through that surface (docs/architecture.md, "Public surfaces").

Pinned here: every name a surface lists exists, is listed once and hides no submodule; a product
module imports another package's names only from that package itself, except where the table
below says why it cannot."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("proxy_addon", "scorer", "sandbox")

SURFACES = (
    "proxy_addon.addon",
    "proxy_addon.matching",
    "proxy_addon.records",
    "proxy_addon.tasks",
    "sandbox.agents",
    "sandbox.harnesses",
    "sandbox.harnesses.claude_code",
    "sandbox.host",
    "sandbox.runs",
    "scorer.batch",
    "scorer.html_report",
    "scorer.judge",
    "scorer.judge.providers",
)
"""The packages with a surface. The three top-level packages have none (every submodule import
runs their `__init__`, so it imports nothing), nor have the ones below."""

NO_SURFACE = {
    "sandbox.container": "its modules run in the container; the launcher, the last program "
    "before the agent's, imports the standard library only, so importing one must not import "
    "the others",
    "sandbox.cluster": "batch, dispatch and returns import Ray, an optional extra",
    "sandbox.demo": "no other package uses it; its site runs alone in a container",
}

MODULES_OF_THEIR_OWN = {
    "sandbox.harnesses.models": "it imports the harness registry from the package's __init__",
    "proxy_addon.records.provenance": "its function has the module's name: re-exported, it "
    "would hide the module",
}
"""Modules other packages import directly, and why they are not in their package's surface."""


def _package_of(module: str, packages: set[str]) -> str:
    if module == "proxy_addon.clawbench":  # the addon's entry file, where mitmdump -s loads it
        return "proxy_addon.addon"
    while module not in packages:
        module = module.rpartition(".")[0]
    return module


def _packages() -> set[str]:
    return {
        ".".join(init.parent.relative_to(ROOT).parts)
        for part in PARTS
        for init in (ROOT / part).rglob("__init__.py")
    }


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_package_is_a_surface_or_says_why_not() -> None:
    assert _packages() - set(PARTS) == set(SURFACES) | set(NO_SURFACE)


@pytest.mark.parametrize("name", SURFACES)
def test_a_surface_lists_names_that_exist_once_and_hide_no_module(name: str) -> None:
    package = importlib.import_module(name)
    listed = package.__all__
    assert len(listed) == len(set(listed)) > 0
    missing = [n for n in listed if not hasattr(package, n)]
    assert missing == []
    submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    hidden = [
        n
        for n in listed
        if n in submodules and not isinstance(getattr(package, n), types.ModuleType)
    ]
    assert hidden == []


def test_packages_import_each_other_through_their_surfaces() -> None:
    """The shared layer's own packages (proxy_addon.*) use each other's modules: records write
    with the matcher's redaction, the matcher reads the task model, task validation finds tasks
    with the records' layout; through their surfaces they would import each other in a circle.
    Everyone else goes through the surface."""
    packages = _packages()
    surfaces = {name: set(importlib.import_module(name).__all__) for name in SURFACES}
    wrong = []
    for path in sorted(p for part in PARTS for p in (ROOT / part).rglob("*.py")):
        me = _module_name(path)
        mine = _package_of(me, packages)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if node.module.split(".")[0] not in PARTS:
                continue
            theirs = _package_of(node.module, packages)
            if theirs == mine or theirs in PARTS or theirs in NO_SURFACE:
                continue
            if mine.startswith("proxy_addon.") and theirs.startswith("proxy_addon."):
                continue
            if node.module in MODULES_OF_THEIR_OWN:
                continue
            if node.module != theirs:
                wrong.append(f"{me}:{node.lineno} from {node.module}")
            else:
                wrong += [
                    f"{me}:{node.lineno} {theirs}.{a.name} is not in its __all__"
                    for a in node.names
                    if a.name not in surfaces[theirs]
                ]
    assert wrong == []
