"""Verdict reuse: the cache key over the judge's inputs, our judge.json, the reference's priors.

The key hashes the inputs before rendering (judge model and settings, rubric, prompt_version,
and scorer.judge.evidence.JudgeInput: instruction, the request dump and the proxy's facts about
it, run date, user information, judge_context), so the random delimiters of each call do not
defeat it, and a changed prompt, model or setting asks again. Our data/judge.json is reused
when its cache_key matches and it holds a verdict; each further judge has its own file and its
own key.
The reference's <run>/judge.json (strict) or judge_llm.json (lenient), or run-meta.json's
"judge" block, is a prior verdict: reused when its match is a boolean (or "true"/"false") and it
names the same judge model; one that names no judge is never reused (whose verdict it is cannot
be known: the reference's #363 labelled an old judge's verdicts with the new judge's name).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from proxy_addon.records import JudgeVerdict, read_verdict, safe_model
from scorer.judge.evidence import JudgeInput
from scorer.judge.verdict import JUDGE_FILES, JudgeRecord

if TYPE_CHECKING:  # annotations only: models_yaml imports the judge's providers
    from scorer.models_yaml import JudgeConfig


def cache_key(judge: JudgeConfig, rubric: str, version: str, data: JudgeInput) -> str:
    """sha256 over the canonical JSON of everything that decides a verdict."""
    blob = json.dumps(
        {
            "judge": judge.cache_params(),
            "rubric": rubric,
            "prompt_version": version,
            "input": data.canonical(),
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def judge_file(run_dir: Path, rubric: str, judge: str | None = None) -> Path:
    """Our verdict file: data/judge.json (strict) or data/judge_llm.json (lenient) for the first
    judge, the reference's names; another judge's beside them, data/judge.<safe_model>.json."""
    name = JUDGE_FILES[rubric]
    if judge is not None:
        name = f"{name.removesuffix('.json')}.{safe_model(judge)}.json"
    return run_dir / "data" / name


def read_record(path: Path) -> tuple[JudgeRecord | None, str | None]:
    """Our judge file, or (None, why) when it is missing or unusable (then it is re-judged)."""
    try:
        return JudgeRecord.model_validate_json(path.read_bytes()), None
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"{path}: unreadable: {e}"
    except ValidationError as e:
        return None, f"{path}: unusable, re-judged ({e.errors(include_url=False)[0]['msg']})"


@dataclass(frozen=True, slots=True)
class Prior:
    """A verdict the reference left; where it came from."""

    verdict: JudgeVerdict
    reason: str
    judge_model: str
    source: str


def _prior_from(data: Any, source: str, judge_name: str) -> Prior | None:
    if not isinstance(data, dict):
        return None
    verdict = read_verdict(data.get("match"))
    model = data.get("judge_model")
    if verdict is None or model != judge_name:  # never another judge's verdict under this name
        return None
    return Prior(verdict, str(data.get("reason") or ""), model, source)


def read_prior(
    run_dir: Path, rubric: str, meta_raw: dict[str, Any] | None, judge_name: str
) -> Prior | None:
    """The reference's verdict for this rubric, if it left a usable one."""
    path = run_dir / JUDGE_FILES[rubric]
    try:
        prior = _prior_from(json.loads(path.read_bytes()), f"reference:{path.name}", judge_name)
    except (OSError, ValueError):
        prior = None
    if prior is None and rubric == "strict" and meta_raw is not None:
        prior = _prior_from(meta_raw.get("judge"), "reference:run-meta.json", judge_name)
    return prior


__all__ = ["Prior", "cache_key", "judge_file", "read_prior", "read_record"]
