"""The report's judge calibration section (clawbench-report --calibration FILE): how the judge that
scored the batches did on a labelled set, and what its errors do to each batch's pass rate.

A calibration is of one judge, prompt and settings (scorer.calibrate.CalibrationResult); a batch
scored by another judge or prompt is named, so nobody reads one judge's figures as another's.
"""

from __future__ import annotations

from scorer.calibrate import CalibrationResult
from scorer.calibration_report import bias_text, rate_text
from scorer.calibration_stats import COLUMNS, DEFAULT_PASS_RATES
from scorer.html_report.load import BatchView
from scorer.html_report.markup import Markup, el


def _figures(result: CalibrationResult) -> Markup:
    f = result.figures
    kappa = "n/a" if f.kappa is None else f"{f.kappa:.3f}"
    ci = "" if f.kappa_low is None else f" (95% {f.kappa_low:.3f} to {f.kappa_high:.3f})"
    rows = [
        ("Cohen's kappa (three verdicts)", f"{kappa}{ci}"),
        ("answered as labelled", rate_text(f.exact)),
        ("recall (labelled matches passed)", rate_text(f.recall)),
        ("precision (passes labelled match)", rate_text(f.precision)),
        ("false positive rate", rate_text(f.false_positive_rate)),
        ("false negative rate", rate_text(f.false_negative_rate)),
        ("cannot_tell, of all cases", rate_text(f.cannot_tell)),
        ("labelled cannot_tell found", rate_text(f.cannot_tell_found)),
        ("judge errors (counted wrong)", f.n_errors),
    ]
    body = [el("tr", el("th", k), el("td", v, class_="num")) for k, v in rows]
    return el("table", el("tbody", body), class_="grid calibration-figures")


def _confusion(result: CalibrationResult) -> Markup:
    head = el("tr", el("th", "label \\ judge"), [el("th", c, class_="num") for c in COLUMNS])
    rows = [
        el("tr", el("th", label), [el("td", row[c], class_="num") for c in COLUMNS])
        for label, row in result.figures.confusion.items()
    ]
    return el("table", el("thead", head), el("tbody", rows), class_="grid confusion")


def _kinds(result: CalibrationResult) -> Markup:
    heads = ["kind", "n", "as labelled", "recall", "precision", "cannot_tell", "errors"]
    head = el("tr", [el("th", h) for h in heads])
    rows = [
        el(
            "tr",
            el("td", k.kind),
            el("td", k.n, class_="num"),
            el("td", rate_text(k.exact)),
            el("td", rate_text(k.recall)),
            el("td", rate_text(k.precision)),
            el("td", k.cannot_tell, class_="num"),
            el("td", k.errors, class_="num"),
        )
        for k in result.by_kind
    ]
    return el("table", el("thead", head), el("tbody", rows), class_="grid calibration-kinds")


def _gates(result: CalibrationResult) -> Markup:
    items = []
    for g in result.gates:
        if g.observed is None:
            state = "not applied (no case of this kind)" if g.default else "failed (no case)"
        else:
            state = f"{'passed' if g.passed else 'FAILED'}: {100 * g.observed:.1f}% of {g.n}"
        default = " (default)" if g.default else ""
        items.append(el("li", f"{g.kind} ≥ {100 * g.minimum:.0f}%{default}: {state}"))
    verdict = "passed every gate" if result.passed else "FAILED a gate"
    return el("div", el("p", el("strong", f"The calibration {verdict}.")), el("ul", items))


def batch_lines(result: CalibrationResult, batches: list[BatchView]) -> list[Markup]:
    """Per batch: whether this calibration is of its judge, and the bias at its own pass rate."""
    lines = []
    for b in batches:
        s = b.summary
        if not b.judged:
            continue
        same = s.judge_model == result.judge and s.prompt_version == result.prompt_version
        judged = s.n_judge_match + s.n_judge_mismatch + s.n_judge_cannot_tell
        text = [el("strong", b.path.name), ": "]
        if not same:
            text.append(
                el(
                    "span",
                    f"scored by {s.judge_model} with prompt {s.prompt_version}, not the judge "
                    f"calibrated here ({result.judge}, prompt {result.prompt_version}): these "
                    "figures are not its judge's.",
                    class_="warn",
                )
            )
        own = result.bias_at(s.n_judge_match / judged) if judged else None
        if own is not None:
            share = judged / s.n_total if s.n_total else 0.0
            text.append(
                f" its own pass rate among judged runs ({s.n_judge_match} of {judged}): "
                f"{bias_text(own)}; on its pass rate over N = {s.n_total}: "
                f"{share * own.net_points:+.1f} points."
            )
        lines.append(el("li", text))
    return lines


def calibration_section(result: CalibrationResult, batches: list[BatchView]) -> Markup:
    """The section's body: who was calibrated, the figures, the gates and the bias."""
    settings = ", ".join(f"{k} {v}" for k, v in result.judge_settings.items() if k != "model")
    who = el(
        "p",
        el("strong", result.judge),
        f" ({settings}); rubric {result.rubric}, prompt {result.prompt_version}; set ",
        el("span", result.set, class_="mono"),
        f" ({result.n_cases} cases).",
    )
    rates = sorted({*DEFAULT_PASS_RATES, *(b.pass_rate for b in result.bias)})
    shown = [b for p in rates if (b := result.bias_at(p)) is not None]
    return Markup(
        who
        + el("div", _figures(result), _confusion(result), class_="calibration")
        + _gates(result)
        + el("h3", "Bias on a pass rate")
        + el("ul", [el("li", bias_text(b)) for b in shown], batch_lines(result, batches))
        + el("h3", "Per kind")
        + _kinds(result)
    )


__all__ = ["batch_lines", "calibration_section"]
