"""The tests' closed world: an --internal Docker network (IPv4 + IPv6) and a fake site on it.

Nothing routes off the machine: the network is internal, the site is a container the tests start,
names resolve through Docker's embedded DNS to that container only.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sandbox.host import FileEntry, files_tar

HERE = Path(__file__).resolve().parent
SITE_HOSTS = ("shop.clawbench.test", "www.shop.clawbench.test")


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_certs(directory: Path, hosts: tuple[str, ...] = SITE_HOSTS) -> dict[str, Path]:
    """A throwaway CA and a site certificate for hosts, as PEM files in directory."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("clawbench test CA"))
        .issuer_name(_name("clawbench test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths = {
        "ca": directory / "ca.pem",
        "cert": directory / "site.pem",
        "key": directory / "key.pem",
    }
    paths["ca"].write_bytes(ca.public_bytes(pem))
    paths["cert"].write_bytes(cert.public_bytes(pem))
    paths["key"].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


@dataclass
class Internet:
    """The internal network and the fake site container on it."""

    client: docker.DockerClient
    network: Any
    site: Any
    ca: Path
    ipv4: str = ""
    ipv6: str = ""
    hosts: tuple[str, ...] = SITE_HOSTS
    extra: list[Any] = field(default_factory=list)

    @property
    def network_name(self) -> str:
        return self.network.name

    @property
    def subnets(self) -> list[str]:
        """The network's private ranges, which the proxy may reach only when told to."""
        self.network.reload()
        return [c["Subnet"] for c in self.network.attrs["IPAM"]["Config"]]

    def log(self) -> list[dict[str, Any]]:
        """Everything the site received so far, one dict per request or datagram."""
        code, out = self.site.exec_run(["cat", "/tmp/site.jsonl"])
        if code != 0:
            return []
        return [json.loads(line) for line in out.decode().splitlines() if line.strip()]

    def close(self) -> None:
        for container in [self.site, *self.extra]:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
        self.network.remove()


def _network(client: docker.DockerClient, name: str) -> Any:
    for _ in range(20):
        a, b = secrets.randbelow(100) + 100, secrets.randbelow(250) + 1
        ipam = docker.types.IPAMConfig(
            pool_configs=[
                docker.types.IPAMPool(subnet=f"10.{a}.{b}.0/24"),
                docker.types.IPAMPool(subnet=f"fd00:cb:{a:x}:{b:x}::/64"),
            ]
        )
        try:
            return client.networks.create(
                name,
                driver="bridge",
                internal=True,
                enable_ipv6=True,
                ipam=ipam,
                labels={"io.clawbench.test": "1"},
            )
        except docker.errors.APIError as e:
            if "overlap" not in str(e).lower():
                raise
    raise RuntimeError("no free private subnet for the test network")


def start_internet(client: docker.DockerClient, image: str, workdir: Path) -> Internet:
    """Create the network and start the fake site; return once it answers."""
    certs = make_certs(workdir)
    name = f"clawbench-test-{secrets.token_hex(3)}"
    network = _network(client, name)
    try:
        site = client.containers.create(
            image,
            entrypoint=[
                "python3",
                "/site/fakesite.py",
                "/site/site.pem",
                "/site/key.pem",
                "/tmp/site.jsonl",
            ],
            name=f"{name}-site",
            detach=True,
            labels={"io.clawbench.test": "1"},
            network=name,
        )
    except Exception:
        network.remove()
        raise
    internet = Internet(client, network, site, certs["ca"])
    try:
        network.disconnect(site)
        network.connect(site, aliases=list(SITE_HOSTS))
        site.put_archive(
            "/",
            files_tar(
                [
                    FileEntry("site/fakesite.py", (HERE / "fakesite.py").read_bytes()),
                    FileEntry("site/site.pem", certs["cert"].read_bytes()),
                    FileEntry("site/key.pem", certs["key"].read_bytes()),
                ]
            ),
        )
        site.start()
        deadline = time.monotonic() + 30
        while b"fakesite: ready" not in site.logs():
            site.reload()
            if site.status == "exited" or time.monotonic() > deadline:
                raise RuntimeError(f"fake site did not start: {site.logs().decode()[-500:]}")
            time.sleep(0.1)
        site.reload()
        settings = site.attrs["NetworkSettings"]["Networks"][name]
        internet.ipv4, internet.ipv6 = settings["IPAddress"], settings["GlobalIPv6Address"]
    except Exception:
        internet.close()
        raise
    return internet
