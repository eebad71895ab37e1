"""Start mitmdump with the addon as a subprocess and wait until it is ready (demo, tests, bench)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from proxy_addon.records.interception import ProxyReady

ADDON = Path(__file__).resolve().parent.parent / "clawbench.py"


class ProxyStartError(RuntimeError):
    """mitmdump exited or never wrote .proxy-ready; the message carries its last output."""


def mitmdump_path() -> str:
    """The mitmdump next to this interpreter (the venv's), else the one on PATH."""
    local = Path(sys.executable).with_name("mitmdump")
    if local.exists():
        return str(local)
    found = shutil.which("mitmdump")
    if not found:
        raise ProxyStartError("mitmdump not found: install mitmproxy>=12 in this environment")
    return found


@dataclass
class ProxyProcess:
    """A running mitmdump + addon; stop() ends it (also as a context manager)."""

    proc: subprocess.Popen[bytes]
    data_dir: Path
    confdir: Path
    ready: ProxyReady
    log_path: Path
    _stopped: bool = field(default=False, repr=False)

    @property
    def ca_cert(self) -> Path:
        return self.confdir / "mitmproxy-ca-cert.pem"

    def address(self, mode: str = "regular") -> tuple[str, int]:
        """(host, port) of the first listener of this mode, as .proxy-ready reports it."""
        for spec in self.ready.listen:
            kind, _, hostport = spec.partition("@")
            if kind == mode:
                host, _, port = hostport.rpartition(":")
                return host.strip("[]"), int(port)
        raise KeyError(f"no {mode} listener in {self.ready.listen}")

    @property
    def url(self) -> str:
        host, port = self.address()
        return f"http://{host}:{port}"

    def stop(self, timeout: float = 10) -> int:
        if not self._stopped:
            self._stopped = True
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        return self.proc.returncode

    def __enter__(self) -> ProxyProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _argv(
    task: str | os.PathLike[str],
    data: Path,
    conf: Path,
    modes: Sequence[str],
    options: Mapping[str, str | Sequence[str]] | None,
    extra_args: Sequence[str] = (),
    quiet: bool = True,
) -> list[str]:
    """The mitmdump command line: the addon, one --mode per listener, one --set per value."""
    args = [mitmdump_path(), *(["-q"] if quiet else []), "-s", str(ADDON)]
    for mode in modes:
        args += ["--mode", mode]
    opts: dict[str, str | Sequence[str]] = {
        "clawbench_task": str(task),
        "clawbench_data": str(data),
        "confdir": str(conf),
    }
    opts.update(options or {})
    for key, value in opts.items():
        for one in [value] if isinstance(value, str) else value:
            args += ["--set", f"{key}={one}"]
    return args + list(extra_args)


def _wait_ready(
    proc: subprocess.Popen[bytes], ready_file: Path, log_path: Path, timeout: float
) -> ProxyReady:
    """.proxy-ready's content once written; ProxyStartError with mitmdump's last lines if it
    exits or the timeout passes first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready_file.exists():
            try:
                return ProxyReady.model_validate_json(ready_file.read_bytes())
            except ValidationError:
                pass  # being written: read it again on the next poll
        elif proc.poll() is not None:
            break
        time.sleep(0.02)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        why = f"no .proxy-ready after {timeout:.0f}s"
    else:
        why = f"mitmdump exited with {proc.returncode}"
    tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
    raise ProxyStartError(f"{why}: " + (" | ".join(tail) or "(no output)"))


def start_proxy(
    task: str | os.PathLike[str],
    data_dir: str | os.PathLike[str],
    *,
    modes: Sequence[str] = ("regular@127.0.0.1:0",),
    confdir: str | os.PathLike[str] | None = None,
    options: Mapping[str, str | Sequence[str]] | None = None,
    ready_timeout: float = 30,
    extra_args: Sequence[str] = (),
    log_path: str | os.PathLike[str] | None = None,
    quiet: bool = True,
) -> ProxyProcess:
    """Run `mitmdump -s proxy_addon/clawbench.py` for task into data_dir; return once ready.

    An option given a list of strings is passed once per value (clawbench_route takes several).
    mitmdump's output goes to log_path (default: <data_dir>.mitmdump.log beside data_dir);
    quiet=False keeps its info lines (the addon's, and one line per flow).
    """
    data = Path(data_dir)
    data.mkdir(parents=True, exist_ok=True)
    conf = Path(confdir) if confdir else data.parent / ".mitmproxy"
    ready_file = data / ".proxy-ready"
    ready_file.unlink(missing_ok=True)
    args = _argv(task, data, conf, modes, options, extra_args, quiet)
    log = Path(log_path) if log_path else data.parent / f"{data.name}.mitmdump.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    ready = _wait_ready(proc, ready_file, log, ready_timeout)
    return ProxyProcess(proc, data, conf, ready, log)


__all__ = [
    "ADDON",
    "ProxyProcess",
    "ProxyStartError",
    "mitmdump_path",
    "start_proxy",
]
