"""A run directory's trip back from a Ray node: trimmed to the limit, packed, and unpacked only
when every member is safe (crafted archives stand in for a hostile or broken node)."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from sandbox.cluster.transfer import MEMBER_LIMIT, TransferRefused, pack, place, trim, unpack
from tests.support.hostile_archives import HOSTILE, ROOT, RUN, crafted, dir_member, file_member


def _run(root: Path) -> Path:
    run = root / "none" / RUN
    (run / "data").mkdir(parents=True)
    (run / "agent" / "trace").mkdir(parents=True)
    (run / "run-meta.json").write_text('{"intercepted": true}')
    (run / "task.json").write_text('{"instruction": "x"}')
    (run / "data" / "interception.json").write_text('{"intercepted": true}')
    (run / "data" / "requests.jsonl").write_bytes(b'{"url": "u"}\n' * 100)
    (run / "agent" / "trace" / "step 1 ü.json").write_bytes(b"\xff\x00 binary")
    return run


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


def test_a_packed_run_unpacks_to_the_same_tree(tmp_path: Path) -> None:
    run = _run(tmp_path / "node")
    archive = pack(tmp_path / "node", run)
    got = unpack(archive, tmp_path / "driver" / ".incoming", "none")
    assert got == tmp_path / "driver" / ".incoming" / RUN
    assert _tree(got) == _tree(run)
    mtimes = [(r / "run-meta.json").stat().st_mtime for r in (got, run)]
    assert abs(mtimes[0] - mtimes[1]) < 1e-3
    placed = place(got, tmp_path / "driver" / "none")
    assert placed == tmp_path / "driver" / "none" / RUN and _tree(placed) == _tree(run)
    again = unpack(archive, tmp_path / "driver" / ".incoming2", "none")
    assert place(again, tmp_path / "driver" / "none").name == f"{RUN}-2"  # as a local run is named


def test_pack_leaves_out_links(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (run / "agent" / "link").symlink_to("/etc/passwd")
    os.mkfifo(run / "agent" / "fifo")
    with tarfile.open(fileobj=io.BytesIO(pack(tmp_path, run))) as tar:
        names = tar.getnames()
    assert f"none/{RUN}/agent/trace/step 1 ü.json" in names
    assert not any(n.endswith(("link", "fifo")) for n in names)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_leave_nothing(tmp_path: Path, case: str) -> None:
    archive = crafted(*HOSTILE[case])
    into = tmp_path / "batch" / ".incoming"
    with pytest.raises(TransferRefused):
        unpack(archive, into, "none")
    assert not into.exists()
    assert list((tmp_path / "batch").iterdir()) == []
    assert not Path("/etc/cron.d/evil").exists()


def test_an_archive_over_the_limit_is_refused(tmp_path: Path) -> None:
    archive = crafted(dir_member(ROOT), file_member(f"{ROOT}/big", b"x" * 10_000))
    with pytest.raises(TransferRefused, match="limit"):
        unpack(archive, tmp_path / "in", "none", limit=8_000)
    assert not (tmp_path / "in").exists()


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    members = [dir_member(ROOT)] + [file_member(f"{ROOT}/{i}", b"") for i in range(MEMBER_LIMIT)]
    with pytest.raises(TransferRefused, match="members"):
        unpack(crafted(*members), tmp_path / "in", "none")


def test_not_a_tar_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TransferRefused, match="tar"):
        unpack(b"\x00garbage" * 200, tmp_path / "in", "none")
    assert not (tmp_path / "in").exists()


def test_trim_keeps_the_records_and_cuts_the_largest_files_last(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (run / "run-meta.json").unlink()  # trim runs before the pipeline writes it
    big = run / "agent" / "trace" / "huge.bin"
    big.write_bytes(b"a" * 300_000)
    (run / "agent" / "trace" / "bigger.bin").write_bytes(b"b" * 400_000)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    notes = trim(run, limit=420_000, reserve=0)
    assert (run / "task.json").read_bytes() == before[run / "task.json"]
    assert (run / "data" / "requests.jsonl").read_bytes() == before[run / "data" / "requests.jsonl"]
    assert big.read_bytes() == before[big]  # smaller files first
    cut = (run / "agent" / "trace" / "bigger.bin").read_bytes()
    assert cut.startswith(b"b" * 1000) and cut.endswith(b" of 400000 bytes]\n")
    (note,) = notes
    assert note.startswith("agent/trace/bigger.bin: cut at ")
    assert note.endswith(" of 400000 bytes (the return limit)")
    assert unpack(pack(tmp_path, run), tmp_path / "back", "none", limit=420_000).is_dir()


def test_trim_drops_what_does_not_fit_at_all(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (run / "agent" / "trace" / "a.bin").write_bytes(b"a" * 50_000)
    (run / "agent" / "trace" / "b.bin").write_bytes(b"b" * 60_000)
    notes = trim(run, limit=20_000, reserve=0)
    assert (run / "task.json").exists() and (run / "data" / "interception.json").exists()
    assert not (run / "agent" / "trace" / "b.bin").exists()
    assert any(n.startswith("agent/trace/b.bin: not returned") for n in notes)
