"""Crafted run-directory archives standing in for a hostile or broken Ray node: one per kind of
member the driver must refuse before writing a byte (sandbox.cluster.transfer.unpack)."""

from __future__ import annotations

import io
import tarfile

RUN = "scripted-case-none-20260101-000000"
ROOT = f"none/{RUN}"

Member = tuple[tarfile.TarInfo, bytes | None]


def crafted(*members: Member) -> bytes:
    """A tar of exactly these members, in this order."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


def dir_member(name: str) -> Member:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info, None


def file_member(name: str, data: bytes = b"x") -> Member:
    return tarfile.TarInfo(name), data


def _special(name: str, kind: bytes, link: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, None


HOSTILE: dict[str, list[Member]] = {
    "absolute": [dir_member(ROOT), file_member("/etc/cron.d/evil")],
    "dot-dot": [dir_member(ROOT), file_member(f"{ROOT}/agent/../../../../escape")],
    "dot-dot-leading": [dir_member(ROOT), file_member(f"../{RUN}/x")],
    "symlink": [dir_member(ROOT), _special(f"{ROOT}/agent/link", tarfile.SYMTYPE, "/etc")],
    "symlink-then-write": [
        dir_member(ROOT),
        _special(f"{ROOT}/agent", tarfile.SYMTYPE, "/tmp"),
        file_member(f"{ROOT}/agent/x"),
    ],
    "hardlink": [dir_member(ROOT), _special(f"{ROOT}/agent/h", tarfile.LNKTYPE, "/etc/passwd")],
    "device": [dir_member(ROOT), _special(f"{ROOT}/agent/dev", tarfile.CHRTYPE)],
    "fifo": [dir_member(ROOT), _special(f"{ROOT}/agent/fifo", tarfile.FIFOTYPE)],
    "other-parent": [dir_member(ROOT), file_member(f"other-model/{RUN}/x")],
    "second-run": [dir_member(ROOT), dir_member(f"none/{RUN}-2")],
    "twice": [dir_member(ROOT), file_member(f"{ROOT}/a", b"1"), file_member(f"{ROOT}/a", b"2")],
    "empty-component": [dir_member(ROOT), file_member(f"{ROOT}//a")],
    "no-run-entry": [file_member(f"{ROOT}/a")],
    "empty": [],
}
"""Archives the driver refuses whole, by what is wrong with them."""
