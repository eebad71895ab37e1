"""Several judges (--judge-model given more than once): each one's verdict kept and cached on its
own, --decide, the agreement section and the ranking of models per judge.

Every judge is an entry of one models.yaml pointing at one scripted loopback server, which
answers by the model the call names and the task in the instruction, so each judge agrees and
disagrees with the others in a known way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.batches import task_json
from bench.reference_batches import reference_run
from proxy_addon.records import JudgeVerdict
from scorer.batch.scored_run import decide_verdict
from scorer.cli import main
from scorer.scoring import ScoreOptions, score
from tests.scorer.conftest import FAKE_KEY
from tests.support.fake_api import Call, FakeModelAPI, Reply, verdict

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"qty": 1}}
PASSES = {"a": {0, 1}, "b": {0}, "c": {0, 1}, "d": {2, 3}}
"""Which cases each judge passes: a and c agree, b is stricter, d says the opposite of a."""


def by_model(call: Call) -> Reply:
    case = int(re.search(r"\(case-(\d+)\)", call.user)[1])  # type: ignore[index]
    judge = call.body["model"]
    return verdict(case in PASSES[judge], f"{judge} on case {case}")


def judges_yaml(path: Path, server: FakeModelAPI, names: str = "abcd") -> Path:
    lines = []
    for name in names:
        lines += [f"{name}:", f"  base_url: {server.base_url}", "  api_type: openai-completions"]
        lines.append(f'  api_key: "{FAKE_KEY}"')
    path.write_text("\n".join(lines) + "\n")
    return path


def batch_of(root: Path, model: str = "m1", runs: int = 4) -> Path:
    batch = root / f"batch-2026010{1 + int(model[-1])}-120000"
    for i in range(runs):
        case = f"case-{i:02d}"
        reference_run(batch, case, task_json(case, task_id=i), model=model, request=GOOD)
    return batch


def run_cli(batch: Path, yaml: Path, *judges: str, extra: tuple[str, ...] = ()) -> dict:
    args = [str(batch), "--models-yaml", str(yaml), "--json", *extra]
    for j in judges:
        args += ["--judge-model", j]
    assert main(args) == 0
    return json.loads((batch / "rescore-summary.json").read_text())


Y, NO, CT = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL


@pytest.mark.parametrize(
    ("rule", "verdicts", "expected"),
    [
        ("first", [Y, NO, NO], Y),
        ("first", [None, Y, Y], None),
        ("first", [CT, Y, Y], CT),  # the first judge alone decides, cannot_tell included
        ("majority", [Y, Y, NO], Y),
        ("majority", [NO, None, NO], NO),
        ("majority", [Y, NO], None),  # a tie is no verdict
        ("majority", [Y, None, None], None),  # one of three is no majority
        ("majority", [Y, CT, CT], Y),  # cannot_tell abstains: one of one voter
        ("majority", [Y, NO, CT], None),  # the voters tie
        ("majority", [Y, CT, None], None),  # the error still counts: one of two is no majority
        ("majority", [CT, CT, CT], CT),  # everyone abstained
        ("unanimous", [Y, Y, Y], Y),
        ("unanimous", [Y, None, Y], None),
        ("unanimous", [Y, None, NO], NO),
        ("unanimous", [Y, CT, Y], Y),  # an abstention does not block a unanimous match
        ("unanimous", [CT, CT], CT),
        ("unanimous", [CT, NO], NO),
    ],
)
def test_decide_rules(
    rule: str, verdicts: list[JudgeVerdict | None], expected: JudgeVerdict | None
) -> None:
    assert decide_verdict(rule, verdicts) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("rule", "passed"), [("first", 2), ("majority", 2), ("unanimous", 1)])
def test_decide_sets_final_pass_from_the_judges(
    tmp_path: Path, judge: FakeModelAPI, rule: str, passed: int
) -> None:
    judge.script(by_model)
    batch, yaml = batch_of(tmp_path), judges_yaml(tmp_path / "models.yaml", judge)
    s = run_cli(batch, yaml, "a", "b", "c", extra=("--decide", rule))
    assert s["n_passed"] == passed
    assert (s["judges"], s["decide"], s["judge_model"]) == (["a", "b", "c"], rule, "a")
    rows = {t["test_case"]: t for t in s["tasks"]}
    assert rows["case-01"]["verdicts"] == {"a": "match", "b": "no_match", "c": "match"}
    assert rows["case-01"]["match_strict"] is True  # the reference's keys: the first judge's
    assert s["n_match_strict"] == 2  # likewise


def test_each_judge_has_its_own_file_and_cache(tmp_path: Path, judge: FakeModelAPI) -> None:
    judge.script(by_model)
    batch, yaml = batch_of(tmp_path), judges_yaml(tmp_path / "models.yaml", judge)
    run_cli(batch, yaml, "a", "b")
    assert judge.count == 8
    run = next(batch.rglob("openclaw-case-01-*"))
    first = json.loads((run / "data" / "judge.json").read_text())
    other = json.loads((run / "data" / "judge.b.json").read_text())
    assert (first["judge_model"], first["match"]) == ("a", True)
    assert (other["judge_model"], other["match"]) == ("b", False)
    assert first["cache_key"] != other["cache_key"]
    meta = json.loads((run / "run-meta.json").read_text())
    assert meta["judge_match"] is True and meta["final_pass"] is True
    run_cli(batch, yaml, "a", "b", extra=("--decide", "unanimous"))  # all saved: no call
    assert judge.count == 8
    assert json.loads((run / "run-meta.json").read_text())["final_pass"] is False
    s = run_cli(batch, yaml, "a", "b", "c")  # a third judge: only its calls are made
    assert judge.count == 12 and len(list(batch.rglob("data/judge.c.json"))) == 4
    assert s["judges"] == ["a", "b", "c"]


def test_the_agreement_section_holds_known_kappas(tmp_path: Path, judge: FakeModelAPI) -> None:
    judge.script(by_model)
    batch, yaml = batch_of(tmp_path), judges_yaml(tmp_path / "models.yaml", judge)
    s = run_cli(batch, yaml, "a", "b", "c")
    a = s["agreement"]
    pairs = {(p["judge_a"], p["judge_b"]): p for p in a["pairs"]}
    # a = [T,T,F,F], b = [T,F,F,F]: observed 3/4, expected 1/2 -> kappa 0.5
    assert pairs["a", "b"]["agreement"] == 0.75 and pairs["a", "b"]["kappa"] == pytest.approx(0.5)
    assert pairs["a", "c"]["kappa"] == pytest.approx(1.0)
    # Fleiss over the 4 runs x 3 judges, by hand: P = 10/12, Pe = (25 + 49) / 144
    assert a["fleiss_kappa"] == pytest.approx((10 / 12 - 74 / 144) / (1 - 74 / 144))
    split = [{"a": "match", "b": "no_match", "c": "match"}]
    assert [d["verdicts"] for d in a["disagreements"]] == split
    assert [j["pass_rate"] for j in a["per_judge"]] == [0.5, 0.25, 0.5]
    assert s["entries"][0]["judge_pass_rates"] == {"a": 0.5, "b": 0.25, "c": 0.5}


def test_one_judge_keeps_the_summary_as_before(tmp_path: Path, judge: FakeModelAPI) -> None:
    judge.script(by_model)
    batch, yaml = batch_of(tmp_path), judges_yaml(tmp_path / "models.yaml", judge)
    s = run_cli(batch, yaml, "a")
    assert "agreement" not in s and "judge_pass_rates" not in s["entries"][0]
    assert s["judges"] == ["a"] and not list(batch.rglob("data/judge.a.json"))


def test_models_are_ranked_per_judge_across_batches(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(by_model)
    root = tmp_path / "sweep"
    batch_of(root, "m1", runs=2)  # a passes both, d neither
    batch_of(root, "m2", runs=4)  # a passes 2 of 4, d the other 2
    yaml = judges_yaml(tmp_path / "models.yaml", judge)
    result = score(ScoreOptions(paths=[root], judges=["a", "d"], models_yaml=yaml))
    assert result.ranking is not None
    order = {r.judge: [m.model for m in r.ranking] for r in result.ranking.rankings}
    assert order == {"a": ["m1", "m2"], "d": ["m2", "m1"]}
    (pair,) = result.ranking.pairs
    assert pair.tau_b == pytest.approx(-1.0)
    capsys.readouterr()
    args = [str(root), "--models-yaml", str(yaml), "--judge-model", "a", "--judge-model", "d"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "ranking by a:" in out and "Kendall's tau-b -1.000" in out and "judge agreement" in out


def test_a_judge_named_twice_is_an_error(tmp_path: Path, judge: FakeModelAPI) -> None:
    batch, yaml = batch_of(tmp_path), judges_yaml(tmp_path / "models.yaml", judge)
    args = [str(batch), "--models-yaml", str(yaml), "--judge-model", "a", "--judge-model", "a"]
    assert main(args) == 2 and judge.count == 0
