"""The report's HTML as a file: links, anchors, redaction, optional fields, broken inputs, CLI."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

import scorer.html_report as html_report
from bench.batches import task_json, write_corpus
from bench.reference_batches import reference_run
from scorer.cli import main as score
from scorer.html_report.cli import main
from scorer.html_report.markup import el, join
from tests.report.conftest import CART, Batches, summary
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import start_judge_server, verdict


class Page(HTMLParser):
    """Every start tag with its attributes, every id, and the text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if a.get("id")}

    def hrefs(self) -> list[str]:
        return [a["href"] or "" for t, a in self.tags if "href" in a and t != "link"]


def render(paths: list[Path], out: Path) -> Page:
    assert main([*map(str, paths), "-o", str(out)]) == 0
    return Page(out.read_text(encoding="utf-8"))


def copy_out(batches: Batches, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(batches.out, out, ignore=shutil.ignore_patterns("*.html"))
    return out


def test_links_are_relative_files_that_exist_and_anchors_that_exist(
    batches: Batches, tmp_path: Path
) -> None:
    out = tmp_path / "reports" / "report.html"
    out.parent.mkdir()
    page = render([batches.out], out)
    hrefs = page.hrefs()
    files = [h for h in hrefs if not h.startswith("#")]
    assert len(files) > 20
    for href in files:
        assert "://" not in href and not href.startswith("/")
        assert (out.parent / unquote(href)).resolve().is_file(), href
    for href in hrefs:
        if href.startswith("#"):
            assert href[1:] in page.ids, href
    # Nothing a browser would fetch: no src but the screenshot's inline PNG, the only <link> is
    # the inline icon.
    sources = [a.get("src") or "" for _, a in page.tags if "src" in a or "srcset" in a]
    assert [s[:22] for s in sources] == ["data:image/png;base64,"]
    assert [a["href"] for t, a in page.tags if t == "link"] == ["data:,"]
    assert [t for t, _ in page.tags if t in ("script", "iframe", "object", "form")] == []


def test_the_wilson_interval_is_computed_when_the_summary_has_none(
    batches: Batches, tmp_path: Path
) -> None:
    page = render([batches.judged], tmp_path / "r.html")
    text = "".join(page.text)
    assert "3.0% – 56.4%" in text  # 1 of 6: Wilson 95% [0.0300, 0.5636], worked by hand
    assert "judge-x" in text and "Stage 1 only" not in text


def test_secrets_in_a_recorded_request_are_redacted_again(tmp_path: Path) -> None:
    batch = tmp_path / "batch-20260103-120000"
    task = task_json("cart-00")
    run = reference_run(batch, "cart-00", task, request={"url": CART, "method": "POST"})
    record = json.loads((run / "data" / "interception.json").read_text())
    record["request"].update(
        url=f"{CART}?api_key=key-in-url-5511",
        headers={"Authorization": "Bearer sk-live-7781", "X-Note": "kept"},
        body={"item": "mug", "password": "hunter2-9921", "nested": {"session_id": "s-4410"}},
    )
    (run / "data" / "interception.json").write_text(json.dumps(record))
    assert score([str(batch), "--no-judge"]) == 0
    render([batch], tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    for secret in ("key-in-url-5511", "sk-live-7781", "hunter2-9921", "s-4410"):
        assert secret not in html
    # the recorded request (Authorization, password, session_id), the timeline's block (the two
    # body fields; its URL as the request's)
    assert html.count("[REDACTED]") == 5 and "api_key=%5BREDACTED%5D" in html and "kept" in html


def test_optional_fields_are_shown_when_present(batches: Batches, tmp_path: Path) -> None:
    out = copy_out(batches, tmp_path)
    batch = out / batches.judged.name
    s = summary(batch)
    ours = next(t for t in s["tasks"] if t["model"] == "qwen/qwen3-coder" and t["final_pass"])
    entry = next(e for e in s["entries"] if e["model"] == "qwen/qwen3-coder")
    entry["pass_rate_with_judge_ci"] = [0.0421, 0.6133]
    s["judges"] = ["judge-x", "judge-y"]
    s["agreement"] = {
        "per_judge": {
            "judge-x": {"pass_rate": 0.3333, "n": 3},
            "judge-y": {"pass_rate": 0.0, "n": 3},
        },
        "pairwise_kappa": [{"a": "judge-x", "b": "judge-y", "kappa": -0.125}],
        "fleiss_kappa": 0.4171,
        "disagreements": [{"run_dir": ours["run_dir"], "judge-x": True, "judge-y": False}],
    }  # fmt: skip
    (batch / "rescore-summary.json").write_text(json.dumps(s))
    extra = json.loads((batch / ours["run_dir"] / "data" / "judge.json").read_text())
    extra.update(judge_model="judge-y", match=False, reason="judge-y says: <i>no</i>")
    (batch / ours["run_dir"] / "data" / "judge.judge-y.json").write_text(json.dumps(extra))

    page = render([batch], tmp_path / "r.html")
    text = "".join(page.text)
    assert "agreement" in page.ids
    assert "0.417" in text and "-0.125" in text and "pass rate" in text
    links = [h for h in page.hrefs() if h.startswith("#run-")]
    disagreeing = next(a for t, a in page.tags if t == "a" and a.get("class") == "mono")
    assert disagreeing["href"] in links
    assert "4.2% – 61.3%" in text  # the summary's interval, not recomputed
    assert "judge-y says: <i>no</i>" in text and "data/judge.judge-y.json" in text
    assert "claims success" in text and "curl 8.5.0" in text and "1234" in text
    assert "1.2k / 56" in text and "$0.0029" in text  # 1234 x $2 + 56 x $8 per million
    titles = [a.get("title") for t, a in page.tags if t == "td"]
    assert "1,234 in / 56 out" in titles  # the exact count behind the short one
    judge_costs = [a for t, a in page.tags if t == "td" and "judge-cost" in a.get("class", "")]
    usage = summary(batch)["entries"][0]["judge_usage"]
    assert usage["cost_usd"] is not None and usage["verdicts"] > 0  # judge-x has a price
    assert {float(a["data-cost"]) for a in judge_costs if a.get("data-cost")} >= {usage["cost_usd"]}
    assert "claims failure" in text and "Could not find the cart." in text


def test_missing_and_broken_files_are_notes_not_failures(batches: Batches, tmp_path: Path) -> None:
    out = copy_out(batches, tmp_path)
    batch = out / batches.judged.name
    runs = {t["test_case"] + t["model"]: batch / t["run_dir"] for t in summary(batch)["tasks"]
            if t["run_dir"]}  # fmt: skip
    (runs["cart-01anthropic/claude-sonnet-4-6"] / "data" / "judge.json").write_text("{not json")
    (runs["cart-03anthropic/claude-sonnet-4-6"] / "data" / "requests.jsonl").unlink()
    shutil.rmtree(runs["cart-02anthropic/claude-sonnet-4-6"])
    with (runs["cart-00qwen/qwen3-coder"] / "data" / "requests.jsonl").open("a") as log:
        log.write('{"url": "https://shop.example.com/api/cart", "near_miss": ["cut')
    page = render([out], tmp_path / "r.html")
    text = "".join(page.text)
    assert "data/judge.json: unreadable or truncated JSON" in text
    assert "No request log (data/requests.jsonl)." in text
    assert "run-meta.json: missing" in text
    assert 'body: key \'item\' expected "red mug", got "blue mug"' in text  # the real near miss
    shown = [a for t, a in page.tags if t == "details" and "data-run" in a]
    assert len(shown) == len(runs) + len(summary(out / batches.stage1.name)["tasks"])  # every run


def test_cli_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "batch-20260104-120000"
    reference_run(batch, "cart-00", task_json("cart-00"))
    assert main([str(batch), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run clawbench-score on it first" in err
    assert not (tmp_path / "r.html").exists()
    assert main([str(tmp_path / "nowhere"), "-o", str(tmp_path / "r.html")]) == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("nodir/r.html", "the directory {tmp}/nodir does not exist; create it first"),
        (".", "is a directory; name a file, e.g. -o {tmp}/report.html"),
    ],
)
def test_an_output_that_cannot_be_written_is_named_before_any_work(
    batches: Batches, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, message: str
) -> None:
    out = tmp_path / where if where != "." else tmp_path
    assert main([str(batches.out), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"clawbench-report: -o {out}: {message.format(tmp=tmp_path)}", err
    assert "Errno" not in err


@pytest.mark.parametrize(
    ("value", "absent"),
    [
        ('"><script>alert(1)</script>', "<script>"),
        ("' onmouseover='alert(1)", "' onmouseover"),
        ("</td></tr></table><img src=x>", "<img"),
    ],
)
def test_markup_escapes_text_and_attributes(value: str, absent: str) -> None:
    html = el("td", value, title=value, data_model=value)
    assert absent not in html and html.count("<td") == 1 and html.endswith("</td>")
    assert absent not in join([value, [value]])


def test_bad_tag_or_attribute_names_are_refused() -> None:
    with pytest.raises(ValueError):
        el("td onclick=x")
    with pytest.raises(ValueError):
        el("td", **{"on click": "x"})


def test_public_surface() -> None:
    assert sorted(html_report.__all__) == [
        "Report",
        "ReportError",
        "load_report",
        "render_report",
        "write_report",
    ]


def test_runs_that_claimed_success_without_passing_are_listed(
    batches: Batches, tmp_path: Path
) -> None:
    page = render([batches.judged], tmp_path / "r.html")
    text = "".join(page.text)
    assert "claims" in page.ids and "The agent's claim" in text
    overclaims = [a for t, a in page.tags if t == "li" and a.get("class") == "overclaim"]
    assert len(overclaims) == 1  # cart-02 said "done"; cart-00 said so too, and passed
    links = [a["href"] for t, a in page.tags if t == "a" and a.get("class") == "mono"]
    s = summary(batches.judged)
    ours = [t for t in s["tasks"] if t["harness"] == "curl"]
    said_done = next(t for t in ours if t["test_case"] == "cart-02")
    assert said_done["result_category"] == "model_not_intercepted"
    assert "cart-02 — not intercepted: agent exited" in " ".join(text.split())
    assert all(h[1:] in page.ids for h in links if h.startswith("#run-"))
    # a batch with no harness run has no claims section
    assert "claims" not in render([batches.stage1], tmp_path / "s.html").ids


Claims = dict[str, bool | None]  # per task: the agent's claim of success (None: no claim)


def _claims_batch(tmp_path: Path, name: str, claims: Claims, judge: bool) -> Path:
    """A browser-use batch whose runs all committed the right request and claimed as given,
    scored with the judge (every verdict a match) or Stage 1 only."""
    tasks = {slug: task_json(slug, task_id=i) for i, slug in enumerate(claims)}
    corpus = write_corpus(tmp_path / f"corpus-{name}", tasks)
    batch = tmp_path / name / "batch-20260103-120000"
    right = {"url": CART, "method": "POST", "body": {"item": "red mug"}}
    for slug, success in claims.items():
        run = reference_run(batch, slug, tasks[slug], harness="browser-use", request=right)
        meta = json.loads((run / "run-meta.json").read_text())
        meta["agent_claim"] = {"success": success, "text": "", "steps": 3}
        (run / "run-meta.json").write_text(json.dumps(meta))
    args = [str(batch), "--tasks", str(corpus)]
    if judge:
        with start_judge_server(lambda call: verdict(True)) as server:
            yaml = models_yaml(tmp_path / f"models-{name}.yaml", server)
            assert score([*args, "--models-yaml", str(yaml), "--judge-model", "judge-x"]) == 0
    else:
        assert score([*args, "--no-judge"]) == 0
    return batch


@pytest.mark.parametrize(
    ("batches", "said"),
    [
        ([({"a": None, "b": False}, True)], "No run claimed success."),
        ([({"a": True, "b": None}, True)], "Every run that claimed success passed."),
        (
            [({"a": True, "b": True}, False)],
            "Every run that claimed success was intercepted (not judged: none has passed yet).",
        ),
        (
            [({"a": True}, True), ({"b": True}, False)],
            "Every run that claimed success passed, or was intercepted where not judged.",
        ),
    ],
    ids=["no-claim", "judged", "not-judged", "both"],
)
def test_the_claims_sentence_says_what_happened(
    tmp_path: Path, batches: list[tuple[Claims, bool]], said: str
) -> None:
    """No claim of success is not "every claim passed", and an intercepted run nobody judged
    is neither a pass nor listed as a claim that did not pass."""
    paths = [_claims_batch(tmp_path, f"b{i}", c, j) for i, (c, j) in enumerate(batches)]
    page = render(paths, tmp_path / "r.html")
    text = " ".join("".join(page.text).split())
    assert "The agent's claim" in text and said in text
    assert not [a for t, a in page.tags if t == "li" and a.get("class") == "overclaim"]
