"""The null agent: takes no action and exits at once (the benchmark floor).

Usage: python -m sandbox.agents.null

A run with it ends as agent_exited within seconds and must never be intercepted: the
interceptor has nothing to fire on. It sends no traffic at all, so any egress_blocked it shows
comes from the image, not from an agent.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Print one line and exit 0."""
    print("null agent: taking no action for this task", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
