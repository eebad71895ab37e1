"""The agent's launcher (sandbox.container.launch) as real processes: its pipe says whether the
agent's command was executed, and the agent never holds that pipe (docs/security.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.container.agent import LaunchError, launched, launcher_argv


def _launch(argv: list[str], tmp_path: Path) -> tuple[str | None, int, str]:
    """Start argv behind the launcher (this venv's Python for the image's): (its report, the
    exit status, what it printed)."""
    report_end, launcher_end = os.pipe()
    wrapped = [sys.executable, *launcher_argv(launcher_end, argv)[1:]]
    proc = subprocess.Popen(
        wrapped, pass_fds=(launcher_end,), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    os.close(launcher_end)
    said = launched(report_end, timeout_s=20)
    out, _ = proc.communicate(timeout=20)
    return said, proc.returncode, out.decode()


def test_a_missing_program_is_reported_by_the_launcher(tmp_path: Path) -> None:
    said, code, _ = _launch(["no-such-harness", "--task", "x"], tmp_path)
    assert said == "no-such-harness: No such file or directory (errno 2)"
    assert code == 127


def test_a_file_that_is_no_program_is_reported_by_the_launcher(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("not a program\n")
    said, code, _ = _launch([str(plain)], tmp_path)
    assert said == f"{plain}: Permission denied (errno 13)"
    assert code == 126
    plain.chmod(0o755)  # executable, but neither ELF nor #!: the kernel refuses it too
    said, code, _ = _launch([str(plain)], tmp_path)
    assert said == f"{plain}: Exec format error (errno 8)"


def test_an_agent_that_started_is_started_whatever_its_status(tmp_path: Path) -> None:
    said, code, out = _launch(["sh", "-c", "echo ran; exit 127"], tmp_path)
    assert (said, code, out) == (None, 127, "ran\n")


def test_the_agent_never_holds_the_launchers_pipe(tmp_path: Path) -> None:
    # what it could write a forged report to: its open descriptors, listed by itself
    said, _, out = _launch(["sh", "-c", "ls /proc/self/fd"], tmp_path)
    assert said is None
    assert sorted(int(fd) for fd in out.split()) == [0, 1, 2, 3]  # 3: ls's own directory


def test_a_launcher_that_never_ran_is_the_sandboxs_failure() -> None:
    report_end, launcher_end = os.pipe()
    proc = subprocess.Popen(["true"], pass_fds=(launcher_end,))  # setpriv failing, say
    os.close(launcher_end)
    with pytest.raises(LaunchError, match="launcher did not run"):
        launched(report_end, timeout_s=20)
    proc.wait()
