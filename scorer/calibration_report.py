"""A judge's calibration (scorer.calibrate.CalibrationResult) as plain text: the judge and its
settings, kappa with its interval, the confusion matrix, the pass-level figures, cannot_tell,
each kind, the gates, the bias at a few true pass rates, and every miss with both reasons."""

from __future__ import annotations

import json

from scorer.calibrate import CalibrationResult
from scorer.calibration_stats import COLUMNS, Bias, Rate


def _num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def rate_text(r: Rate, percent: bool = True) -> str:
    """'92.1% (81/88, 84.5-96.1%)' or 'n/a (0 cases)'."""
    if r.value is None or r.low is None or r.high is None:
        return "n/a (0 cases)"
    if percent:
        return f"{100 * r.value:.1f}% ({r.k}/{r.n}, {100 * r.low:.1f}–{100 * r.high:.1f}%)"
    return f"{r.value:.3f} ({r.k}/{r.n}, {r.low:.3f}–{r.high:.3f})"


def bias_text(b: Bias) -> str:
    """One line: at p, the net points with their interval, and where they come from."""
    return (
        f"at a true pass rate of {100 * b.pass_rate:.0f}%: {b.net_points:+.1f} points "
        f"(95% {b.net_low:+.1f} to {b.net_high:+.1f}): +{b.false_pass_points:.1f} wrongly "
        f"passed, −{b.lost_pass_points:.1f} passes lost"
    )


def _settings(settings: dict[str, object]) -> str:
    return ", ".join(f"{k} {json.dumps(v)}" for k, v in settings.items() if k != "model")


def render(result: CalibrationResult) -> str:
    """The whole calibration as text."""
    f = result.figures
    lines = [
        f"Judge calibration of {result.judge} ({_settings(result.judge_settings)})",
        f"rubric {result.rubric}, prompt {result.prompt_version}, dump limit "
        f"{result.dump_limit} bytes; set {result.set} ({result.n_cases} cases, "
        f"sha256 {result.set_sha256[:12]})",
        f"{f.n_errors} judge errors (each counted as the wrong answer)",
        "",
        f"kappa {_num(f.kappa)} (95% {_num(f.kappa_low)} to {_num(f.kappa_high)}); "
        f"answered as labelled {rate_text(f.exact)}",
        f"recall {rate_text(f.recall)}   precision {rate_text(f.precision)}",
        f"false positives {rate_text(f.false_positive_rate)}   false negatives "
        f"{rate_text(f.false_negative_rate)}",
        f"cannot_tell {rate_text(f.cannot_tell)} of all cases; labelled cannot_tell found "
        f"{rate_text(f.cannot_tell_found)}",
        "",
        "confusion (labels down, the judge across):",
        f"  {'':<12}" + "".join(f"{c:>12}" for c in COLUMNS),
    ]
    for label, row in f.confusion.items():
        lines.append(f"  {label:<12}" + "".join(f"{row[c]:>12}" for c in COLUMNS))
    lines += [
        "",
        f"{'kind':<27} {'n':>4}  {'as labelled':<26} {'recall':<26} {'precision':<26} "
        f"{'c_t':>4} {'err':>4}",
    ]
    for k in result.by_kind:
        lines.append(
            f"{k.kind:<27} {k.n:>4}  {rate_text(k.exact):<26} {rate_text(k.recall):<26} "
            f"{rate_text(k.precision):<26} {k.cannot_tell:>4} {k.errors:>4}"
        )
    lines += ["", "gates:"]
    for g in result.gates:
        if g.observed is None:
            state = "not applied (no case of this kind)" if g.default else "FAILED (no case)"
        else:
            state = "passed" if g.passed else "FAILED"
            state = f"{state}: {100 * g.observed:.1f}% of {g.n} answered as labelled"
        default = " (default)" if g.default else ""
        lines.append(f"  {g.kind} >= {100 * g.minimum:.0f}%{default}: {state}")
    if result.min_kappa is not None:
        ok = f.kappa is not None and f.kappa >= result.min_kappa
        lines.append(f"  kappa >= {result.min_kappa:g}: {'passed' if ok else 'FAILED'}")
    lines += ["", "bias (how many points the judge's errors move a pass rate):"]
    lines += [f"  {bias_text(b)}" for b in result.bias] or [
        "  n/a (no labelled matches or no others)"
    ]
    lines += ["", f"misses: {len(result.misses)}"]
    for m in result.misses:
        lines.append(f"- {m.id} [{m.kind}] label {m.label}, judge {m.judge or 'error'}")
        if m.reason:
            lines.append(f"    judge: {' '.join(m.reason.split())}")
        lines.append(f"    why:   {m.why}")
    lines += ["", f"calibration {'passed' if result.passed else 'FAILED'}"]
    return "\n".join(lines) + "\n"


__all__ = ["bias_text", "rate_text", "render"]
