"""Make every client in the container trust mitmproxy's CA (never its key) and use the proxy.

The system store gets the certificate the way update-ca-certificates would (the .crt under
/usr/local/share/ca-certificates, appended to the bundle, a subject-hash link) in milliseconds
instead of seconds; Chromium gets an NSS db in the agent's home; Python, curl, git and Node get
environment variables.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from sandbox.container.contract import AGENT_HOME, PROXY_URL

LOCAL_CRT = Path("/usr/local/share/ca-certificates/clawbench-mitmproxy.crt")
CERTS_DIR = Path("/etc/ssl/certs")
BUNDLE = CERTS_DIR / "ca-certificates.crt"


def install_system(ca_pem: bytes) -> None:
    """Add the CA to the system trust store and bundle (root only)."""
    LOCAL_CRT.parent.mkdir(parents=True, exist_ok=True)
    LOCAL_CRT.write_bytes(ca_pem)
    LOCAL_CRT.chmod(0o644)
    old = BUNDLE.read_bytes() if BUNDLE.exists() else b""
    if ca_pem not in old:
        tmp = BUNDLE.with_name(".ca-certificates.crt.tmp")
        tmp.write_bytes(old.rstrip(b"\n") + b"\n" + ca_pem if old else ca_pem)
        tmp.chmod(0o644)
        os.replace(tmp, BUNDLE)
    link = CERTS_DIR / "clawbench-mitmproxy.pem"
    if not link.exists():
        link.symlink_to(LOCAL_CRT)
    if shutil.which("openssl"):
        done = subprocess.run(
            ["openssl", "x509", "-noout", "-subject_hash", "-in", str(LOCAL_CRT)],
            capture_output=True,
            text=True,
            check=False,
        )
        hashed = CERTS_DIR / f"{done.stdout.strip()}.0"
        if done.returncode == 0 and not hashed.exists():
            hashed.symlink_to(link.name)


def install_nss(ca_file: Path, home: Path, uid: int, gid: int) -> bool:
    """Create $HOME/.pki/nssdb trusting the CA (Chromium's store); False without certutil."""
    if not shutil.which("certutil"):
        return False
    db = home / ".pki" / "nssdb"
    db.mkdir(parents=True, exist_ok=True)
    for args in (
        ["-N", "--empty-password"],
        ["-A", "-t", "C,,", "-n", "clawbench-mitmproxy", "-i", str(ca_file)],
    ):
        subprocess.run(["certutil", "-d", f"sql:{db}", *args], check=True, capture_output=True)
    for path in [home / ".pki", db, *db.iterdir()]:
        os.chown(path, uid, gid)
    return True


def client_env(proxy_url: str, bundle: str, node_ca: str) -> dict[str, str]:
    """What HTTP clients read to use a proxy and trust its CA: the proxy variables in both
    cases with nothing exempt (127.0.0.1 must go through the proxy too: the submit page), the
    CA bundle for OpenSSL, Python, curl and git, Node's extra CA, and Node's opt-in to the
    proxy variables."""
    env = {
        "NODE_USE_ENV_PROXY": "1",
        "SSL_CERT_FILE": bundle,
        "REQUESTS_CA_BUNDLE": bundle,
        "CURL_CA_BUNDLE": bundle,
        "GIT_SSL_CAINFO": bundle,
        "NODE_EXTRA_CA_CERTS": node_ca,
    }
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        env[name] = env[name.upper()] = proxy_url
    env["no_proxy"] = env["NO_PROXY"] = ""
    return env


def agent_env(extra: dict[str, str], instruction: str, instruction_file: str) -> dict[str, str]:
    """The agent's whole environment: proxy in both cases, CA bundles, instruction, user --env."""
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": AGENT_HOME,
        "USER": "agent",
        "LOGNAME": "agent",
        "LANG": "C.UTF-8",
        "SHELL": "/bin/sh",
        "TMPDIR": "/tmp",
        **client_env(PROXY_URL, str(BUNDLE), str(LOCAL_CRT)),
        "CLAWBENCH_PROXY_URL": PROXY_URL,
        "CLAWBENCH_CA_CERT": str(LOCAL_CRT),
        "CLAWBENCH_INSTRUCTION": instruction,
        "CLAWBENCH_INSTRUCTION_FILE": instruction_file,
        "CLAWBENCH_MY_INFO": "/my-info",
        # Chromium bypasses proxies for loopback unless told not to; the submit page's POST
        # must reach the addon. QUIC is dropped by the firewall anyway; this avoids the retry.
        "CLAWBENCH_CHROMIUM_FLAGS": (
            f"--proxy-server={PROXY_URL} --proxy-bypass-list=<-loopback> --disable-quic"
        ),
    }
    env.update(extra)
    return env
