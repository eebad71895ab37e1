"""The gold set's second, blind labelling: an export without labels, and the agreement tool.

`blind_export` writes every case of a set as the judge would see it (the user message of its
prompt, markers fixed) under an opaque id, in an order that gives nothing away, with no label,
reason or kind: cases.json for tools, cases.md to read. A second labeller, who has not seen the
set, writes a labels file (`SecondLabels`: {"labeller", "set_sha256", "labels": {id: verdict},
"notes": {id: text}}). `agreement` maps it back and reports how far the two labellings agree:
observed agreement, Cohen's kappa with its 95% interval, the confusion matrix, and every case
they disagree on, for reconciliation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy_addon.records import JudgeVerdict, write_bytes_atomic
from scorer.calibrate import set_digest
from scorer.calibration import (
    CalibrationCase,
    CalibrationError,
    CalibrationTaskInfo,
    cases_of,
    judge_input,
    load_set,
)
from scorer.calibration_stats import Rate, rate
from scorer.judge import user_message
from scorer.stats import cohen_kappa_interval

EXPORT_FORMAT = "clawbench-blind-export/1"
LABELS_FORMAT = "clawbench-second-labels/1"
MARKERS = ("<<<REQUEST>>>", "<<<END REQUEST>>>")
_FORBID = ConfigDict(extra="forbid")


def blind_id(case_id: str) -> str:
    """A case's opaque id in the blind export (v1's ids say pos- and neg-)."""
    return "b-" + hashlib.sha256(case_id.encode()).hexdigest()[:10]


class BlindCase(BaseModel):
    model_config = _FORBID

    id: str  # the opaque id: label it under this
    view: str  # exactly what the judge is given (its user message), markers fixed


class BlindExport(BaseModel):
    """cases.json of a blind export."""

    model_config = _FORBID

    format: str = EXPORT_FORMAT
    set_sha256: str
    n_cases: int
    rubric: str  # where the labelling rules are
    labels_file: str  # what to write, and how
    cases: list[BlindCase]


class SecondLabels(BaseModel):
    """The second labeller's file: a verdict per opaque id, optional notes."""

    model_config = _FORBID

    format: str = LABELS_FORMAT
    labeller: str = Field(min_length=1)
    set_sha256: str
    labels: dict[str, JudgeVerdict]
    notes: dict[str, str] = Field(default_factory=dict)


LABELS_HOWTO = (
    'Write one JSON object: {"format": "clawbench-second-labels/1", "labeller": "<you>", '
    '"set_sha256": "<this export\'s set_sha256>", "labels": {"<id>": "match" | "no_match" | '
    '"cannot_tell", ...}, "notes": {"<id>": "optional one-line comment"}}. Label every case by '
    "RUBRIC.md from its view alone."
)


def _order(pairs: list[tuple[CalibrationTaskInfo, CalibrationCase]]) -> list[int]:
    """Cases in the order of their opaque ids: neither the task nor the label shows through."""
    return sorted(range(len(pairs)), key=lambda i: blind_id(pairs[i][1].id))


def blind_export(gold: Path, rubric: str = "test-cases/judge-calibration/RUBRIC.md") -> BlindExport:
    """The set's cases as the judge sees them, with no label, reason or kind."""
    pairs = cases_of(load_set(gold))
    cases = [
        BlindCase(id=blind_id(pairs[i][1].id), view=user_message(judge_input(*pairs[i]), *MARKERS))
        for i in _order(pairs)
    ]
    return BlindExport(
        set_sha256=set_digest(gold),
        n_cases=len(cases),
        rubric=rubric,
        labels_file=LABELS_HOWTO,
        cases=cases,
    )


def markdown(export: BlindExport) -> str:
    """cases.md: the same cases to read, one section each."""
    parts = [
        "# Blind labelling: judge gold set",
        "",
        f"{export.n_cases} cases. Rules: {export.rubric}. {export.labels_file}",
        f"set_sha256: {export.set_sha256}",
    ]
    for case in export.cases:
        parts += ["", f"## {case.id}", "", "````text", case.view.rstrip("\n"), "````"]
    return "\n".join(parts) + "\n"


def write_export(export: BlindExport, out: Path) -> list[Path]:
    """cases.json and cases.md into the directory out (made if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    files = [
        (out / "cases.json", export.model_dump_json(indent=1) + "\n"),
        (out / "cases.md", markdown(export)),
    ]
    for path, text in files:
        write_bytes_atomic(path, text.encode())
    return [p for p, _ in files]


def read_labels(path: Path) -> SecondLabels:
    """A second labeller's file (CalibrationError names the file, field and fix)."""
    try:
        return SecondLabels.model_validate_json(path.read_bytes())
    except OSError as e:
        raise CalibrationError(path, "", f"cannot read: {e.strerror or e}") from e
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(x) for x in err["loc"]) or "(top level)"
        raise CalibrationError(path, where, f"{err['msg']} ({LABELS_HOWTO})") from e


class Disagreement(BaseModel):
    model_config = _FORBID

    id: str
    blind_id: str
    kind: str
    first: JudgeVerdict
    second: JudgeVerdict
    why: str  # the first labelling's reason
    note: str  # the second labeller's, if any


class LabelAgreement(BaseModel):
    """Two labellings of one set compared."""

    model_config = _FORBID

    labeller: str
    n_cases: int
    n_labelled: int
    unlabelled: list[str]  # case ids the second labeller left out
    unknown: list[str]  # ids in the labels file that are no case of the set
    set_changed: bool  # the labels were made on another version of the set
    agreement: Rate
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    confusion: dict[str, dict[str, int]]  # first label -> second label -> cases
    disagreements: list[Disagreement]

    @property
    def complete(self) -> bool:
        return not self.unlabelled and not self.unknown


def agreement(gold: Path, second: SecondLabels) -> LabelAgreement:
    """How far the set's labels and a second labelling agree."""
    pairs = cases_of(load_set(gold))
    by_blind = {blind_id(c.id): c for _, c in pairs}
    both: list[tuple[CalibrationCase, JudgeVerdict]] = [
        (by_blind[b], v) for b, v in second.labels.items() if b in by_blind
    ]
    both.sort(key=lambda pair: pair[0].id)
    firsts = [str(c.label) for c, _ in both]
    seconds = [str(v) for _, v in both]
    kappa = cohen_kappa_interval(firsts, seconds)
    confusion = {str(a): {str(b): 0 for b in JudgeVerdict} for a in JudgeVerdict}
    for a, b in zip(firsts, seconds, strict=True):
        confusion[a][b] += 1
    return LabelAgreement(
        labeller=second.labeller,
        n_cases=len(pairs),
        n_labelled=len(both),
        unlabelled=sorted(c.id for _, c in pairs if blind_id(c.id) not in second.labels),
        unknown=sorted(b for b in second.labels if b not in by_blind),
        set_changed=second.set_sha256 != set_digest(gold),
        agreement=rate(sum(a == b for a, b in zip(firsts, seconds, strict=True)), len(both)),
        kappa=kappa[0] if kappa else None,
        kappa_low=kappa[1] if kappa else None,
        kappa_high=kappa[2] if kappa else None,
        confusion=confusion,
        disagreements=[
            Disagreement(
                id=c.id,
                blind_id=blind_id(c.id),
                kind=c.kind,
                first=c.label,
                second=v,
                why=c.why,
                note=second.notes.get(blind_id(c.id), ""),
            )
            for c, v in both
            if c.label is not v
        ],
    )


def render_agreement(a: LabelAgreement, limit: int | None = None) -> str:
    """The agreement as text, every disagreement listed (up to limit)."""
    k = "n/a" if a.kappa is None else f"{a.kappa:.3f}"
    low = "n/a" if a.kappa_low is None else f"{a.kappa_low:.3f}"
    high = "n/a" if a.kappa_high is None else f"{a.kappa_high:.3f}"
    shown = a.agreement
    lines = [
        f"second labelling by {a.labeller}: {a.n_labelled} of {a.n_cases} cases labelled",
        f"agreement {shown.k}/{shown.n} ({100 * (shown.value or 0):.1f}%), Cohen's kappa {k} "
        f"(95% {low} to {high})",
        "confusion (the set's labels down, the second labelling across):",
    ]
    columns = [str(v) for v in JudgeVerdict]
    lines.append(f"  {'':<12}" + "".join(f"{c:>12}" for c in columns))
    for label, row in a.confusion.items():
        lines.append(f"  {label:<12}" + "".join(f"{row[c]:>12}" for c in columns))
    if a.set_changed:
        lines.append("note: the labels were made on another version of the set (set_sha256)")
    if a.unlabelled:
        lines.append(f"unlabelled: {len(a.unlabelled)} cases, e.g. {', '.join(a.unlabelled[:5])}")
    if a.unknown:
        lines.append(f"unknown ids: {len(a.unknown)}, e.g. {', '.join(a.unknown[:5])}")
    shown_d: Sequence[Disagreement] = a.disagreements[:limit] if limit else a.disagreements
    lines.append(f"disagreements: {len(a.disagreements)}")
    for d in shown_d:
        lines.append(f"- {d.id} ({d.blind_id}) [{d.kind}] set {d.first}, second {d.second}")
        lines.append(f"    why:  {d.why}")
        if d.note:
            lines.append(f"    note: {' '.join(d.note.split())}")
    return "\n".join(lines) + "\n"


def agreement_json(a: LabelAgreement) -> str:
    return json.dumps(a.model_dump(mode="json"), ensure_ascii=False)


__all__ = [
    "EXPORT_FORMAT",
    "LABELS_FORMAT",
    "LABELS_HOWTO",
    "BlindCase",
    "BlindExport",
    "LabelAgreement",
    "SecondLabels",
    "agreement",
    "agreement_json",
    "blind_export",
    "blind_id",
    "markdown",
    "read_labels",
    "render_agreement",
    "write_export",
]
