"""Fail-closed egress for the agent's container: only loopback and the `proxy` user leave the box.

Policy (the same for IPv4 and IPv6, UDP included, so no QUIC or DNS-tunnel shortcut to a site):

* nat OUTPUT: the agent's TCP to ports 80/443 anywhere is redirected into mitmproxy's
  transparent listener, so an agent that ignores the proxy variables is still seen; with a
  submit page, the agent's TCP to 127.0.0.1:7878 is redirected too (its POST must pass the addon).
* filter OUTPUT: accept loopback, connections our REDIRECT rewrote, and anything the `proxy`
  user sends; accept socket-less kernel packets (resets, TIME_WAIT acks) of connections already
  allowed, and IPv6 neighbour discovery (the kernel's own packets, no owner); accept the
  agent's DNS to the resolvers in /etc/resolv.conf (Docker's embedded resolver is 127.0.0.11, on
  loopback already); everything else goes to CLAWBENCH_DROP; what of it the agent sent is
  counted in CLAWBENCH_AGENT_DROP, whose counters are egress_blocked.
  TCP is answered with a reset so a blocked agent fails fast instead of hanging in SYN retries.

DNS, decided: the agent may resolve names (an agent that ignores the proxy variables needs them to
reach the transparent path at all). That lets it put data into query names that a hostile
authoritative server could read (DNS tunnelling), but no request reaches a website that way, so
no task can be completed past the addon; everything sent to a site still passes mitmproxy.

Docker installs its own nat rules for the embedded resolver in the container's namespace, so we
add our own chains and jump to them; we never flush a built-in chain.
"""

from __future__ import annotations

import ipaddress
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

OUT = "CLAWBENCH_OUT"
DROP = "CLAWBENCH_DROP"
AGENT_DROP = "CLAWBENCH_AGENT_DROP"
NAT = "CLAWBENCH_NAT"
# Kernel-generated ICMPv6 without a socket owner: router/neighbour discovery and MLD reports.
ICMPV6_ALLOWED = ("133", "135", "136", "143")
_TRACKED = ("-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED")


@dataclass(frozen=True)
class Policy:
    """Who may send what; the uids are resolved by the entrypoint."""

    agent_uid: int
    proxy_uid: int
    transparent_port: int
    nameservers: tuple[str, ...] = ()
    submit_port: int | None = None


def _loopback(family: int) -> str:
    return "127.0.0.1" if family == 4 else "::1"


def nameservers_from(resolv_conf: str) -> tuple[str, ...]:
    """The `nameserver` addresses of a resolv.conf text, in order, invalid ones left out."""
    out = []
    for line in resolv_conf.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            try:
                out.append(str(ipaddress.ip_address(parts[1].split("%")[0])))
            except ValueError:
                continue
    return tuple(out)


def filter_rules(policy: Policy, family: int) -> list[list[str]]:
    """The filter-table commands (arguments after iptables/ip6tables) for one address family."""
    rules = [
        ["-N", OUT],
        ["-N", DROP],
        ["-N", AGENT_DROP],
        ["-A", OUT, "-o", "lo", "-j", "ACCEPT"],
        [
            "-A",
            OUT,
            "-m",
            "conntrack",
            "--ctstate",
            "DNAT",
            "-d",
            _loopback(family),
            "-j",
            "ACCEPT",
        ],
        ["-A", OUT, "-m", "owner", "--uid-owner", str(policy.proxy_uid), "-j", "ACCEPT"],
        # The kernel's own packets for connections already allowed (a TIME_WAIT ack, a reset
        # after the proxy closed): no socket, so no owner, and no agent data in them.
        ["-A", OUT, "-m", "owner", "!", "--socket-exists", *_TRACKED, "-j", "ACCEPT"],
    ]
    if family == 6:
        for kind in ICMPV6_ALLOWED:
            rules.append(["-A", OUT, "-p", "ipv6-icmp", "--icmpv6-type", kind, "-j", "ACCEPT"])
    for ns in policy.nameservers:
        addr = ipaddress.ip_address(ns)
        if addr.version != family or addr.is_loopback:
            continue
        agent = ["-m", "owner", "--uid-owner", str(policy.agent_uid), "-d", ns]
        for proto in ("udp", "tcp"):
            rules.append(["-A", OUT, *agent, "-p", proto, "--dport", "53", "-j", "ACCEPT"])
    rules += [
        ["-A", OUT, "-j", DROP],
        # Counted (egress_blocked) only when the agent sent it: Docker's resolver forwarding the
        # agent's lookups from this namespace is root's, and no agent packet.
        ["-A", DROP, "-m", "owner", "--uid-owner", str(policy.agent_uid), "-j", AGENT_DROP],
        ["-A", DROP, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-A", DROP, "-j", "DROP"],
        ["-A", AGENT_DROP, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-A", AGENT_DROP, "-j", "DROP"],
        ["-I", "OUTPUT", "1", "-j", OUT],
        ["-P", "OUTPUT", "DROP"],
    ]
    return rules


def nat_rules(policy: Policy, family: int) -> list[list[str]]:
    """The nat-table commands: the agent's web traffic into the transparent listener."""
    agent = ["-m", "owner", "--uid-owner", str(policy.agent_uid), "-p", "tcp"]
    to = ["-j", "REDIRECT", "--to-ports", str(policy.transparent_port)]
    rules = [
        ["-N", NAT],
        ["-A", NAT, *agent, "-m", "multiport", "--dports", "80,443", *to],
    ]
    if policy.submit_port is not None:
        rules.append(
            ["-A", NAT, *agent, "-d", _loopback(family), "--dport", str(policy.submit_port), *to]
        )
    rules.append(["-I", "OUTPUT", "1", "-j", NAT])
    return rules


class FirewallError(RuntimeError):
    """A rule the kernel refused; the agent must not start."""


def _tool(family: int) -> str:
    return "iptables" if family == 4 else "ip6tables"


def _run(family: int, table: str, rules: Iterable[Sequence[str]]) -> None:
    for rule in rules:
        cmd = [_tool(family), "-w", "-t", table, *rule]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise FirewallError(f"{' '.join(cmd)}: {done.stderr.strip() or done.returncode}")


def apply(policy: Policy, families: Sequence[int]) -> list[str]:
    """Install the rules for each family; return warnings (IPv6 nat missing is one, not fatal).

    Without IPv6 nat the agent's IPv6 web traffic is dropped instead of redirected: still closed.
    """
    warnings = []
    for family in families:
        _run(family, "filter", filter_rules(policy, family))
        try:
            _run(family, "nat", nat_rules(policy, family))
        except FirewallError as e:
            if family == 4:
                raise
            warnings.append(f"IPv6 nat unavailable, the agent's IPv6 web traffic is dropped: {e}")
    return warnings


def parse_counters(listing: str) -> int:
    """Sum the packet counters of an `iptables -L CHAIN -v -x -n` listing."""
    total = 0
    for line in listing.splitlines():
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if first.isdigit():
            total += int(first)
    return total


def dropped(families: Sequence[int]) -> int:
    """Packets of the agent's that the firewall refused, over all families."""
    total = 0
    for family in families:
        done = subprocess.run(
            [_tool(family), "-w", "-t", "filter", "-L", AGENT_DROP, "-v", "-x", "-n"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise FirewallError(f"{_tool(family)} -L {AGENT_DROP}: {done.stderr.strip()}")
        total += parse_counters(done.stdout)
    return total


def tentative_ipv6() -> bool:
    """Whether an IPv6 address is still in duplicate address detection (IFA_F_TENTATIVE).

    The link-local address of a new container stays tentative for about 1.5 s; when DAD ends the
    kernel announces the change, and a browser agent's first page load, then in flight, fails
    with net::ERR_NETWORK_CHANGED (Chromium aborts requests on any address change)."""
    try:
        lines = Path("/proc/net/if_inet6").read_text().splitlines()
    except OSError:
        return False
    return any(
        int(fields[4], 16) & 0x40 for fields in (line.split() for line in lines) if len(fields) > 4
    )


def ipv6_enabled() -> bool:
    """True when the namespace has IPv6 on loopback (Docker disables it on IPv4-only networks)."""
    try:
        return "00000000000000000000000000000001" in Path("/proc/net/if_inet6").read_text()
    except OSError:
        return False
