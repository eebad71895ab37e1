"""The agent's launcher: the last program before the agent's own, so the sandbox knows for
certain whether the agent's command started (docs/security.md, "could not be executed").

Usage (the entrypoint's, never the agent's): python -I -m sandbox.container.launch FD -- ARGV...

It runs as the agent's user once setpriv has dropped every privilege, and reports on FD, a pipe
only the entrypoint reads: `L` when it runs, then, if the exec of ARGV fails, one line `E errno
message`. FD is closed by a successful exec, so the agent's code never holds it and nothing it
does can write a report: what the pipe says is evidence the agent cannot forge, which its exit
status (126 and 127 included) is not.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

STARTED = b"L"
FAILED = b"E"
CANNOT_EXECUTE = 126  # the shell's statuses, for a human reading agent.log: the run's verdict
NOT_FOUND = 127  # comes from the pipe, never from these


def exec_failure(error: OSError, program: str) -> str:
    """Why a program could not be executed, as the run records say it."""
    return f"{program}: {error.strerror} (errno {error.errno})"


def main(argv: Sequence[str]) -> int:
    """Report on the pipe, then become the agent (or report why not and exit 126/127)."""
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("launch: usage: launch FD -- ARGV...", file=sys.stderr)
        return 2
    report, command = int(argv[0]), list(argv[2:])
    os.set_inheritable(report, False)  # closed by the exec: the agent never holds it
    os.write(report, STARTED)
    try:
        os.execvp(command[0], command)
    except OSError as e:
        os.write(report, FAILED + exec_failure(e, command[0]).encode())
        print(f"launch: cannot execute {command[0]}: {e.strerror}", file=sys.stderr)
        return NOT_FOUND if isinstance(e, FileNotFoundError) else CANNOT_EXECUTE
    raise AssertionError("unreachable: execvp returns only by raising")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
