"""How a run ended: intercepted, the model's failure, or infrastructure's (SPEC section 7).

Infra failures are counted apart: a task that does not load, a missing image, a proxy that never
became ready, a container that died or had to be killed, an agent command that cannot execute.
Everything else that did not intercept is the model's (agent's) failure.

"Cannot execute" is exit status 126 or 127 (the shell's "cannot execute" and "not found") with
no request of the agent's seen by the proxy (no line in data/requests.jsonl). The status alone
does not say it: `sh -c 'harness; missing-tool'` ran the harness and still ends with 127. The
request count does: everything the agent sends off the box passes the proxy (the firewall drops
the rest), so a model can act, even just call its own API, only through it. A command that made
no request gave the model nothing to do, and re-running it (batch --resume) is no second try; one
that made a request was the model's run, whatever its last status. Run time is no signal: a
harness may think for minutes before it fails, and a loaded host slows a missing one down too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.contract import SandboxReport

EXIT_CODES = {"intercepted": 0, "model_not_intercepted": 1, "infra_failure": 2}
INFRA_REASONS = ("proxy_failed", "container_failed", "interrupted")
NOT_EXECUTABLE = (126, 127)  # the shell's "cannot execute" and "not found"


@dataclass(frozen=True)
class Verdict:
    """result_category, the stop reason for run-meta and, for infra failures, why."""

    result_category: str
    stop_reason: str
    failure_reason: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.result_category]

    @property
    def interception_reason(self) -> str:
        """The stop_reason for a not-intercepted interception.json (one of STOP_REASONS)."""
        if self.stop_reason in ("agent_exited", "time_limit_exceeded", "proxy_failed"):
            return self.stop_reason
        if self.stop_reason in ("container_failed", "interrupted", "host_timeout"):
            return "container_failed"
        return "unknown"


def classify(
    *,
    intercepted: bool,
    report: SandboxReport | None,
    setup_failure: str | None = None,
    exit_code: int | None = None,
    host_timeout: bool = False,
    agent_requests: int = 0,
) -> Verdict:
    """Decide a run's category from what the container left behind.

    agent_requests: lines in data/requests.jsonl (the agent's requests the proxy saw).
    """
    if intercepted:
        return Verdict("intercepted", "intercepted")
    if setup_failure is not None:
        reason = "task_data" if setup_failure.startswith("task_data") else "container_failed"
        return Verdict("infra_failure", reason, setup_failure)
    if report is None:
        why = f"no report.json from the container (exit code {exit_code})"
        if host_timeout:
            why = "host_timeout: the container outlived its deadline and left no report"
        return Verdict("infra_failure", "container_failed", why)
    if host_timeout:
        return Verdict(
            "infra_failure", "host_timeout", "host_timeout: the container outlived its deadline"
        )
    if report.stop_reason in INFRA_REASONS:
        return Verdict("infra_failure", report.stop_reason, report.detail or report.stop_reason)
    if (
        report.stop_reason == "agent_exited"
        and report.agent_exit_code in NOT_EXECUTABLE
        and agent_requests == 0
    ):
        return Verdict(
            "infra_failure",
            "agent_exited",
            f"agent command could not be executed (exit code {report.agent_exit_code},"
            " no request reached the proxy)",
        )
    if report.stop_reason == "intercepted":
        # .stop-requested without interception.json: the addon's record is missing.
        return Verdict("infra_failure", "unknown", "stop requested but no interception.json")
    return Verdict("model_not_intercepted", report.stop_reason)
