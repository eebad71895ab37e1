"""A run's timeline from its files: the agent's steps, its traffic (the run's HAR, built from
data/requests.jsonl as traffic.har is), then how it ended, the judges' verdicts and the agent's
claim. The report's run page and `clawbench-report RUN_DIR` both show this."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy_addon.records import Har, JudgeVerdict, StopReason
from scorer.html_report.agentsteps import agent_events
from scorer.html_report.timeline import Event, EventKind, Timeline, assemble

if TYPE_CHECKING:
    from scorer.html_report.runfiles import RunView


def _end(view: RunView) -> Event:
    stop = view.stop_reason or StopReason.UNKNOWN
    title = f"run ended: {stop}"
    if view.stop_description and view.stop_description not in title:
        title += f" ({view.stop_description})"
    meta = view.meta
    if meta is not None and meta.duration_seconds:
        title += f" after {meta.duration_seconds:.1f} s"
    if view.row.result_category:
        title += f" · result: {view.row.result_category}"
    return Event(EventKind.END, None, title, tone="good" if view.row.intercepted else "warn")


_SAID = {
    JudgeVerdict.MATCH: ("match", "good"),
    JudgeVerdict.NO_MATCH: ("mismatch", "bad"),
    JudgeVerdict.CANNOT_TELL: ("cannot tell", "warn"),
}
_NONE = ("no verdict (a judge error)", "warn")


def _verdicts(view: RunView) -> list[Event]:
    if not view.judges:
        if view.row.intercepted:
            return [Event(EventKind.VERDICT, None, "not judged (Stage 1 only)", tone="warn")]
        return []
    out = []
    for j in view.judges:
        said, tone = _SAID[j.verdict] if j.verdict else _NONE
        who = " ".join(x for x in (j.judge_model, f"({j.rubric})" if j.rubric else None) if x)
        lines = (j.reason, f"could not see: {j.missing}" if j.missing else "",
                 f"error: {j.error}" if j.error else "")  # fmt: skip
        title = f"judge {who}: {said}" if who else f"judge: {said}"
        detail = "\n".join(x for x in lines if x)
        out.append(Event(EventKind.VERDICT, None, title, detail, tone=tone))
    return out


def _claim(view: RunView) -> list[Event]:
    claim = view.agent_claim
    if claim is None:
        return []
    said = {
        True: "the agent claims success",
        False: "the agent claims failure",
        None: "the agent made no claim of success",
    }[claim.success]
    tone = "bad" if claim.success and not view.row.final_pass else None
    return [Event(EventKind.CLAIM, None, said, claim.text, tone=tone)]


def run_timeline(view: RunView, har: Har) -> Timeline:
    """The timeline of a loaded run (its HAR built once by the caller)."""
    notes: list[str] = []
    agent = agent_events(view.dir, notes)
    closing = [_end(view), *_verdicts(view), *_claim(view)]
    timeline = assemble(agent, har, closing)
    timeline.notes = notes
    if not agent:
        timeline.notes.append(
            "No agent trace (agent/trace.jsonl, agent/transcript.jsonl, agent/steps.jsonl, "
            "data/actions.jsonl): the agent's steps are its requests."
        )
    return timeline


__all__ = ["run_timeline"]
