"""The report's stylesheet, inlined (the page may load nothing: CSP default-src 'none')."""

from __future__ import annotations

from scorer.html_report.outcomes import OUTCOMES

_BASE = """
:root {
  --ink: #1d2330; --muted: #667085; --line: #e4e7ec; --soft: #f2f4f7; --page: #f7f8fa;
  --card: #ffffff; --accent: #2f5bd3; --accent-soft: #c9d7fb; --mono: ui-monospace,
  "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--page); color: var(--ink); line-height: 1.5; font-size: 15px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans",
    Arial, sans-serif;
}
main { max-width: 1240px; margin: 0 auto; padding: 28px 24px 64px; }
header.top { margin-bottom: 20px; }
header.top h1 { font-size: 1.75rem; margin: 0 0 4px; letter-spacing: -0.01em; }
.sub { color: var(--muted); margin: 0; }
nav.toc { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 14px 0 0; font-size: 0.92rem; }
nav.toc a { color: var(--accent); text-decoration: none; }
nav.toc a:hover { text-decoration: underline; }
section.card {
  background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 20px 24px; margin: 0 0 22px; box-shadow: 0 1px 2px rgba(16, 24, 40, 0.04);
}
section.card > h2 { font-size: 1.2rem; margin: 0 0 4px; }
section.card > p.note { color: var(--muted); margin: 0 0 14px; font-size: 0.9rem; }
h3 { font-size: 1.02rem; margin: 22px 0 8px; }
h4 { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted);
  margin: 18px 0 6px; }
.muted { color: var(--muted); }
.num { font-variant-numeric: tabular-nums; text-align: right; white-space: nowrap; }
table { border-collapse: collapse; width: 100%; }
th { text-align: left; font-weight: 600; font-size: 0.78rem; text-transform: uppercase;
  letter-spacing: 0.04em; color: var(--muted); }
table.grid th, table.grid td { padding: 8px 10px; border-bottom: 1px solid var(--line);
  vertical-align: middle; }
table.grid tbody tr:hover { background: #fafbfc; }
table.grid th.num { text-align: right; }
.table-wrap { overflow-x: auto; }
.nowrap { white-space: nowrap; }
.model { font-weight: 600; }
table.leaderboard th, table.leaderboard td { padding: 7px 8px; }
table.leaderboard th { white-space: normal; }
table.leaderboard .sub { color: var(--muted); font-size: 0.84rem; }
table.leaderboard .rate { display: block; }
table.leaderboard .missing { display: block; }
.rank { color: var(--muted); width: 2em; }
.rate { font-weight: 600; font-size: 1.02rem; }
.ci-text { color: var(--muted); font-size: 0.82rem; }
svg.ci { display: block; }
.tag { display: inline-block; font-size: 0.72rem; padding: 1px 7px; border-radius: 999px;
  background: var(--soft); color: var(--muted); border: 1px solid var(--line);
  vertical-align: 1px; white-space: nowrap; }
.tag.warn { background: #fff4e5; color: #8a4b00; border-color: #ffd8a8; }
.funnels { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr));
  gap: 16px; }
.funnel { border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; }
.funnel h3 { margin: 0 0 10px; font-size: 0.98rem; }
.step { display: grid; grid-template-columns: 108px 1fr 74px; gap: 10px; align-items: center;
  margin: 6px 0; font-size: 0.88rem; }
.step .track { background: var(--soft); border-radius: 6px; height: 18px; overflow: hidden; }
.step .fill { height: 100%; border-radius: 6px; min-width: 2px; }
.fill.n { background: #98a2b3; } .fill.i { background: #6f95e8; } .fill.p { background: #1f9d55; }
.drop { color: var(--muted); font-size: 0.8rem; margin: -2px 0 0 118px; }
.legend { display: flex; flex-wrap: wrap; gap: 8px 18px; margin: 6px 0 14px; font-size: 0.85rem; }
.legend span.item { display: inline-flex; align-items: center; gap: 6px; }
.sw { display: inline-flex; width: 20px; height: 20px; border-radius: 4px; align-items: center;
  justify-content: center; font-size: 0.75rem; font-weight: 700; }
.matrix-wrap { overflow: auto; max-height: 78vh; border: 1px solid var(--line); width: fit-content;
  max-width: 100%;
  border-radius: 8px; }
table.matrix { width: auto; border-collapse: separate; border-spacing: 2px; }
table.matrix th.task { position: sticky; left: 0; background: var(--card); z-index: 1;
  text-transform: none; letter-spacing: 0; color: var(--ink); font-weight: 500;
  font-size: 0.82rem; max-width: 280px; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; padding: 2px 10px 2px 6px; }
table.matrix thead th { position: sticky; top: 0; background: var(--card); z-index: 2;
  vertical-align: bottom; padding: 6px 2px; }
table.matrix thead th.col { writing-mode: vertical-rl; transform: rotate(180deg);
  text-transform: none; letter-spacing: 0; font-size: 0.78rem; color: var(--ink);
  white-space: nowrap; text-align: left; }
th.col span { display: block; max-height: 230px; overflow: hidden; text-overflow: ellipsis; }
th.col span.h { font-weight: 400; color: var(--muted); font-size: 0.72rem; }
table.matrix td.cell { width: 26px; min-width: 26px; height: 24px; text-align: center;
  border-radius: 4px; font-size: 0.78rem; font-weight: 700; padding: 0; }
td.cell a { color: inherit; text-decoration: none; display: block; line-height: 24px; }
td.cell.o-missing { border: 1px dashed #c4c9d2; }
table.matrix td.count { font-size: 0.78rem; color: var(--muted); padding: 0 6px; }
table.matrix tfoot th { font-size: 0.75rem; text-align: center; }
details.run { border: 1px solid var(--line); border-radius: 8px; margin: 6px 0;
  background: var(--card); }
details.run[open] { box-shadow: 0 2px 8px rgba(16, 24, 40, 0.06); }
details.run > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 10px;
  align-items: center; flex-wrap: wrap; list-style: none; }
details.run > summary::-webkit-details-marker { display: none; }
details.run > summary .case { font-weight: 600; }
details.run:has(.run-body:target) { outline: 2px solid var(--accent); }
.run-body { padding: 2px 16px 14px; border-top: 1px solid var(--line);
  scroll-margin-top: 56px; }
dl.facts { display: grid; grid-template-columns: 160px 1fr; gap: 4px 14px; margin: 12px 0 0;
  font-size: 0.9rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.instruction { white-space: pre-wrap; background: var(--soft); border-radius: 8px;
  padding: 10px 12px; font-size: 0.92rem; overflow-wrap: anywhere; }
pre { font-family: var(--mono); font-size: 0.8rem; background: #f5f6f8; border: 1px solid
  var(--line); border-radius: 8px; padding: 10px 12px; max-height: 440px; overflow: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.verdict { font-weight: 700; }
.v-true { color: #157a42; } .v-false { color: #b42318; } .v-none { color: #7a4cb0; }
.v-unsure { color: #8a6d00; }
.warn { color: #b42318; }
.calibration { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
ul.misses { margin: 0; padding-left: 18px; font-size: 0.88rem; }
ul.misses code, .mono { font-family: var(--mono); font-size: 0.82rem; overflow-wrap: anywhere; }
ul.files { columns: 2 260px; margin: 0; padding-left: 18px; font-size: 0.88rem; }
ul.files a { color: var(--accent); }
.problems { background: #fff4e5; border: 1px solid #ffd8a8; border-radius: 8px;
  padding: 10px 14px; margin: 0 0 18px; font-size: 0.9rem; }
table.kv th { width: 220px; vertical-align: top; text-transform: none; letter-spacing: 0;
  font-size: 0.88rem; }
table.kv th, table.kv td { padding: 5px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; font-size: 0.88rem; }
footer { color: var(--muted); font-size: 0.82rem; margin-top: 28px; }
@media print { details.run { break-inside: avoid; } .matrix-wrap { max-height: none; } }
"""


def stylesheet() -> str:
    """The base rules plus one rule per outcome colour."""
    colours = "".join(
        f".o-{o.key} {{ background: {o.background}; color: {o.foreground}; }}\n" for o in OUTCOMES
    )
    return _BASE + colours


__all__ = ["stylesheet"]
