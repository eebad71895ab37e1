"""The claude-code harness's driver: Claude Code in print mode with Playwright MCP, on one task.

Usage: python3 driver.py [--out DIR] [--max-turns N] [--time-limit S] [--prefix DIR]
                         [--chromium PATH] [--no-claim-prompt]

Stdlib only (it runs with the image's python3 as the agent user). It reads the instruction
($CLAWBENCH_INSTRUCTION or the file $CLAWBENCH_INSTRUCTION_FILE), the model from
$CLAWBENCH_AGENT_MODEL / _BASE_URL / _API_KEY, writes the MCP config, runs `claude -p` with the
browser (mcp__playwright__*), Bash and Read only and a turn cap, within the time limit, and
keeps in --out: transcript.jsonl (Claude Code's stream-json, as it arrives), claude-code.log
(its stderr), playwright/ (the MCP server's snapshots) and result.json. The key reaches Claude
Code through its environment only and is scrubbed from everything written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

try:
    from sandbox.harnesses.claude_code import invocation
    from sandbox.harnesses.claude_code.transcript import Transcript, claim_prompt
except ImportError:  # run by path in the image: the modules sit beside this file
    import invocation  # type: ignore[no-redef]
    from transcript import Transcript, claim_prompt  # type: ignore[no-redef]

__all__ = ["instruction_of", "main", "parse_args", "run"]

HARNESS = "claude-code"
DEFAULT_PREFIX = "/opt/clawbench/claude-code"
DEFAULT_MAX_TURNS = 50
STOP_GRACE_S = 5.0


def _env_int(env: dict[str, str], name: str) -> int | None:
    value = env.get(name, "").strip()
    return int(float(value)) if value else None


def parse_args(argv: Sequence[str], env: dict[str, str]) -> argparse.Namespace:
    """Options, with defaults from the sandbox's environment."""
    p = argparse.ArgumentParser(prog="claude-code driver", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(env.get("CLAWBENCH_AGENT_OUT") or "agent-out"))
    p.add_argument("--max-turns", type=int, default=_env_int(env, "CLAWBENCH_AGENT_MAX_STEPS"))
    p.add_argument("--time-limit", type=float, default=_env_int(env, "CLAWBENCH_TIME_LIMIT_S"))
    p.add_argument(
        "--prefix",
        type=Path,
        default=Path(env.get("CLAWBENCH_CLAUDE_CODE_PREFIX") or DEFAULT_PREFIX),
    )
    p.add_argument("--chromium", default=env.get("CLAWBENCH_CHROMIUM") or "/usr/bin/chromium")
    p.add_argument(
        "--no-claim-prompt",
        action="store_true",
        help="do not ask the agent to end with a TASK_STATUS line",
    )
    args = p.parse_args(argv)
    args.max_turns = args.max_turns or DEFAULT_MAX_TURNS
    return args


def instruction_of(env: dict[str, str]) -> str:
    """The task's instruction, as the sandbox hands it to every agent."""
    if env.get("CLAWBENCH_INSTRUCTION"):
        return env["CLAWBENCH_INSTRUCTION"]
    path = env.get("CLAWBENCH_INSTRUCTION_FILE")
    if path:
        return Path(path).read_text(encoding="utf-8")
    raise SystemExit("driver: no instruction (CLAWBENCH_INSTRUCTION or _FILE)")


def _pump(stream: IO[bytes], sink: Transcript) -> None:
    for line in iter(stream.readline, b""):
        sink.line(line)


def _prepare(args: argparse.Namespace, env: dict[str, str], key: str) -> list[str]:
    """The run's directories, MCP and Playwright configs; Claude Code's command line."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "workspace").mkdir(exist_ok=True)
    proxy = env.get("CLAWBENCH_PROXY_URL") or env.get("HTTPS_PROXY") or env.get("https_proxy")
    mcp_path = out / "mcp.json"
    mcp_path.write_text(
        json.dumps(invocation.mcp_config(args.prefix, args.chromium, proxy, out), indent=1)
    )
    (out / "playwright.json").write_text(json.dumps(invocation.playwright_config(), indent=1))
    extra = None if args.no_claim_prompt else claim_prompt()
    return invocation.build_command(
        args.prefix,
        env["CLAWBENCH_AGENT_MODEL"],
        args.max_turns,
        mcp_path,
        extra,
        env.get("CLAWBENCH_MY_INFO"),
        instruction_of(env),
    )


def _execute(
    args: argparse.Namespace, env: dict[str, str], cmd: list[str], sink: Transcript
) -> tuple[int, list[str]]:
    """Run Claude Code until it ends, SIGTERM or the time limit: (exit code, why stopped)."""
    key, model = env["CLAWBENCH_AGENT_API_KEY"], env["CLAWBENCH_AGENT_MODEL"]
    with open(args.out / "claude-code.log", "wb") as log:
        proc = subprocess.Popen(
            cmd,
            env=invocation.claude_env(env, env["CLAWBENCH_AGENT_BASE_URL"], key, model),
            cwd=args.out / "workspace",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
        )
        stopped: list[str] = []

        def stop(reason: str) -> None:
            stopped.append(reason)
            _signal_group(proc, signal.SIGTERM)

        signal.signal(signal.SIGTERM, lambda *_: stop("sigterm"))
        timer = None
        if args.time_limit:
            timer = threading.Timer(max(1.0, args.time_limit - STOP_GRACE_S), stop, ["time_limit"])
            timer.start()
        assert proc.stdout is not None
        pump = threading.Thread(target=_pump, args=(proc.stdout, sink), daemon=True)
        pump.start()
        code = _wait(proc, stopped)
        pump.join(STOP_GRACE_S)
        if timer:
            timer.cancel()
    return code, stopped


def run(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Run Claude Code once; return the result (also written to out/result.json)."""
    model = env.get("CLAWBENCH_AGENT_MODEL", "")
    key = env.get("CLAWBENCH_AGENT_API_KEY", "")
    if not (model and key and env.get("CLAWBENCH_AGENT_BASE_URL")):
        raise SystemExit("driver: CLAWBENCH_AGENT_MODEL, _BASE_URL and _API_KEY must be set")
    out: Path = args.out
    cmd = _prepare(args, env, key)
    sink = Transcript(out / "transcript.jsonl", secrets=[key])
    started = time.monotonic()
    code, stopped = _execute(args, env, cmd, sink)
    sink.close()
    _scrub(out / "claude-code.log", key)
    result = sink.result(HARNESS, invocation.versions(args.prefix), model)
    result.update(
        exit_code=code,
        stopped=stopped[0] if stopped else None,
        duration_s=round(time.monotonic() - started, 3),
        max_turns=args.max_turns,
    )
    if code != 0 and not result.get("error"):
        tail = (out / "claude-code.log").read_text(errors="replace").strip().splitlines()[-3:]
        result["error"] = f"claude exited with {code}" + (": " + " | ".join(tail) if tail else "")
    tmp = out / ".result.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, out / "result.json")
    return result


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # claude, its MCP server and the browser


def _wait(proc: subprocess.Popen[bytes], stopped: list[str]) -> int:
    """Wait for claude; once stopped, SIGKILL its group if it is still there STOP_GRACE_S later."""
    kill_at = None
    while True:
        try:
            code = proc.wait(0.2)
            break
        except subprocess.TimeoutExpired:
            if stopped and kill_at is None:
                kill_at = time.monotonic() + STOP_GRACE_S
            if kill_at is not None and time.monotonic() > kill_at:
                _signal_group(proc, signal.SIGKILL)
    _signal_group(proc, signal.SIGTERM)  # what claude left behind (a browser), if anything
    return code


def _scrub(path: Path, secret: str) -> None:
    if secret and path.exists():
        data = path.read_bytes()
        if secret.encode() in data:
            path.write_bytes(data.replace(secret.encode(), b"[REDACTED]"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the harness; exit 0 when Claude Code ran to its end (whatever the task's outcome)."""
    env = dict(os.environ)
    args = parse_args(sys.argv[1:] if argv is None else argv, env)
    result = run(args, env)
    print(json.dumps({k: result.get(k) for k in ("success", "steps", "stopped", "exit_code")}))
    return 0 if result.get("exit_code") == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
