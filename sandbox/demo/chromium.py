"""Headless Chromium as the demo and the tests run it: where it is, its flags, and the pin that
makes it trust one mitmproxy CA without touching a trust store."""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path

QUIET_FEATURES = (
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "NetworkTimeServiceQuerying",
    "OptimizationHints",
    "MediaRouter",
    "Translate",
    "AutofillServerCommunication",
    "CertificateTransparencyComponentUpdater",
)
"""Features turned off: https upgrades of the demo's http pages, and background requests."""
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    # The browser's own traffic, off where Chromium lets it be turned off (Chromium 156 still
    # lists the sign-in accounts and asks the component updater once, whatever the flags).
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-client-side-phishing-detection",
    "--disable-domain-reliability",
    "--no-pings",
    "--metrics-recording-only",
    "--disable-quic",
    "--disable-features=" + ",".join(QUIET_FEATURES),
    "--enable-logging=stderr",
)
"""Headless Chromium as the demo (and the tests) run it."""


def spki_pin(ca_pem: Path) -> str:
    """base64(sha256(SubjectPublicKeyInfo)) of the CA; mitmproxy signs leaves with its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    cert = x509.load_pem_x509_certificate(ca_pem.read_bytes())
    der = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def find_chromium() -> str | None:
    """A Chromium or Chrome binary on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


__all__ = ["CHROMIUM_FLAGS", "QUIET_FEATURES", "find_chromium", "spki_pin"]
