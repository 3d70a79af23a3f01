#pragma once
// The stylesheet of the HTML report, inlined into the page (kept apart so html_report.cpp stays about
// structure). System-neutral typography: the report must look right on any machine with no web fonts.
namespace zb::reports {

inline constexpr const char* html_report_style = R"css(
:root { --ink:#1F2933; --muted:#616E7C; --rule:#E4E7EB; --panel:#FFFFFF; --page:#F5F7FA;
        --pass:#1E7F4F; --pass-bg:#E3F6EC; --fail:#B42318; --fail-bg:#FDECEA; --warn:#8A5A00; --warn-bg:#FFF4DB; }
* { box-sizing: border-box; }
body { margin:0; background:var(--page); color:var(--ink);
       font: 14px/1.5 -apple-system, "Segoe UI", "Helvetica Neue", Helvetica, Arial, "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 24px 48px; }
header.verdict { background:var(--panel); border:1px solid var(--rule); border-radius:10px; padding:20px 24px; margin-bottom:20px; }
header h1 { font-size: 22px; margin: 0 0 4px; font-weight: 650; letter-spacing: -0.01em; }
header .description { color: var(--muted); margin: 0 0 12px; }
.badges { display:flex; flex-wrap:wrap; gap:8px; margin: 10px 0; }
.badge { display:inline-block; padding:3px 10px; border-radius:999px; font-weight:600; font-size:12.5px; border:1px solid transparent; }
.badge.pass { color:var(--pass); background:var(--pass-bg); border-color:#B7E4CB; }
.badge.fail { color:var(--fail); background:var(--fail-bg); border-color:#F5C2BD; }
.badge.neutral { color:var(--muted); background:#EEF1F4; border-color:var(--rule); }
.badge.sim { color:var(--warn); background:var(--warn-bg); border-color:#F2D48A; }
.facts { color: var(--muted); font-size: 12.5px; margin: 6px 0 0; }
.headline { margin: 10px 0; }
.headline p { margin: 2px 0; }
.headline p.versus { font-size: 16px; font-weight: 650; color: var(--pass); }
.headline p.versus.lost { color: var(--fail); }
.headline p.best-baseline { color: var(--muted); font-size: 13px; }
.options-title { margin: 12px 0 2px; font-weight: 600; font-size: 13px; }
ul.options { margin: 0; padding-left: 20px; font-size: 13px; color: var(--muted); }
.facts span + span::before { content: " \00B7  "; }
section { background:var(--panel); border:1px solid var(--rule); border-radius:10px; padding:18px 22px; margin-bottom:20px; }
section h2 { font-size: 16px; margin: 0 0 4px; font-weight: 650; }
section p.lead { color: var(--muted); margin: 0 0 12px; font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 7px 10px; border-bottom: 1px solid var(--rule); text-align: right; white-space: nowrap; }
th.text, td.text { text-align: left; white-space: normal; }
.table-scroll { overflow-x: auto; }
th { white-space: normal; vertical-align: bottom; font-size: 11.5px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
th:first-child, td:first-child { text-align: left; }
td.oom { color: var(--fail); font-weight: 600; text-align: left; }
td.best { font-weight: 700; }
td .layouts { color: var(--muted); font-size: 12px; font-weight: 400; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:8px; vertical-align:baseline; }
.gate.pass td.result { color: var(--pass); font-weight: 700; }
.gate.fail td.result { color: var(--fail); font-weight: 700; }
.grid2 { display:grid; grid-template-columns: 1fr 1fr; gap: 8px 18px; }
h3 { font-size: 13.5px; margin: 14px 0 2px; font-weight: 650; }
svg.chart { max-width: 100%; height: auto; display: block; }
svg text { font-family: inherit; fill: var(--ink); }
svg text.tick { font-size: 11px; fill: var(--muted); }
svg text.axis-title { font-size: 12px; fill: var(--muted); }
svg text.legend, svg text.label { font-size: 12.5px; }
svg text.value { font-size: 12px; font-weight: 600; }
svg text.panel { font-size: 11px; fill: var(--muted); }
svg text.oom { font-size: 12.5px; fill: var(--fail); font-weight: 600; }
p.note { color: var(--muted); font-style: italic; }
ul.problems { color: var(--fail); font-size: 12.5px; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 8px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
)css";

}  // namespace zb::reports
