"""The sandbox's proxy: its command line (the container's, the demo's, the tests' and the
benchmarks' alike), and starting it as a subprocess, ready once .proxy-ready is written.

The proxy is `clawbench-proxy` (proxy_addon/addon/master.py: mitmproxy with the addon and only
the built-in addons it needs, uvloop); `stock=True` runs the addon
under mitmdump's own launch instead, for the page-load benchmark's comparison."""

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
MASTER = "proxy_addon.addon.master"
"""The sandbox's proxy process, run as `python -m` (the `clawbench-proxy` command)."""


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


def proxy_argv(
    python: str,
    modes: Sequence[str],
    settings: Mapping[str, str | Sequence[str]],
    *,
    quiet: bool = False,
    stock: bool = False,
) -> list[str]:
    """The proxy's command line for the interpreter `python` (the venv's bin/python): one
    --mode per listener, one --set per value (a list of strings is passed once per value)."""
    if stock:
        args = [str(Path(python).with_name("mitmdump")), "-s", str(ADDON)]
    else:
        args = [python, "-m", MASTER]
    if quiet:
        args.append("-q")
    for mode in modes:
        args += ["--mode", mode]
    for key, value in settings.items():
        for one in [value] if isinstance(value, str) else value:
            args += ["--set", f"{key}={one}"]
    return args


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
    stock: bool = False,
) -> ProxyProcess:
    """Run the sandbox's proxy for task into data_dir; return once ready.

    An option given a list of strings is passed once per value (clawbench_route takes several).
    Its output goes to log_path (default: <data_dir>.mitmdump.log beside data_dir); quiet=False
    keeps its info lines (the addon's). stock=True: mitmdump -s proxy_addon/clawbench.py.
    """
    data = Path(data_dir)
    data.mkdir(parents=True, exist_ok=True)
    conf = Path(confdir) if confdir else data.parent / ".mitmproxy"
    ready_file = data / ".proxy-ready"
    ready_file.unlink(missing_ok=True)
    settings: dict[str, str | Sequence[str]] = {
        "clawbench_task": str(task),
        "clawbench_data": str(data),
        "confdir": str(conf),
    }
    settings.update(options or {})
    args = proxy_argv(sys.executable, modes, settings, quiet=quiet, stock=stock)
    args += list(extra_args)
    log = Path(log_path) if log_path else data.parent / f"{data.name}.mitmdump.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    ready = _wait_ready(proc, ready_file, log, ready_timeout)
    return ProxyProcess(proc, data, conf, ready, log)


__all__ = [
    "ADDON",
    "MASTER",
    "ProxyProcess",
    "ProxyStartError",
    "mitmdump_path",
    "proxy_argv",
    "start_proxy",
]
