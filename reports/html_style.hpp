#pragma once
// The stylesheet of the HTML report, inlined into the page (kept apart so html_report.cpp stays about
// structure). System-neutral typography: the report must look right on any machine with no web fonts.
// It must read on a phone (390 px) as on a desktop, with no script: wide tables and charts scroll sideways
// inside their section (.scroll-x) instead of widening the page or losing columns, charts shrink with
// their column only as far as their text stays legible (svg.hpp), legends are HTML and wrap, and narrow
// screens get slimmer margins and one column. tests/browser/check_report_layout.sh holds it to that.
namespace zb::reports {

inline constexpr const char* html_report_style = R"css(
:root { --ink:#1F2933; --muted:#616E7C; --rule:#E4E7EB; --panel:#FFFFFF; --page:#F5F7FA;
        --pass:#1E7F4F; --pass-bg:#E3F6EC; --fail:#B42318; --fail-bg:#FDECEA; --warn:#8A5A00; --warn-bg:#FFF4DB; }
* { box-sizing: border-box; }
body { margin:0; background:var(--page); color:var(--ink); overflow-wrap: break-word;
       font: 14px/1.5 -apple-system, "Segoe UI", "Helvetica Neue", Helvetica, Arial, "Noto Sans", "DejaVu Sans", sans-serif;
       -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
/* 1360 px: at 1280 px and wider the Summary table's columns (one per baseline) fit without scrolling. */
main { max-width: 1360px; margin: 0 auto; padding: 28px 24px 48px; }
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
th, td { padding: 7px 8px; border-bottom: 1px solid var(--rule); text-align: right; white-space: nowrap; }
th.text, td.text { text-align: left; white-space: normal; }
/* Summary cells that may wrap when the table is squeezed: the system (label, strategy, layouts) and two
   figures ("6.79 s ± 235 ms"), whose own spaces do not break. */
td.system { white-space: normal; min-width: 8em; }
td.system .label { white-space: nowrap; }
td.pair { white-space: normal; }
th { white-space: normal; vertical-align: bottom; font-size: 11.5px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
th:first-child, td:first-child { text-align: left; }
td.oom { color: var(--fail); font-weight: 600; text-align: left; }
td.best { font-weight: 700; }
td .layouts { color: var(--muted); font-size: 12px; font-weight: 400; white-space: normal; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:8px; vertical-align:baseline; }
.swatch.line { width:14px; height:2px; border-radius:0; vertical-align:middle; }
.gate.pass td.result { color: var(--pass); font-weight: 700; }
.gate.fail td.result { color: var(--fail); font-weight: 700; }
/* minmax(0, 1fr): a column may be narrower than its chart, which then scrolls, instead of widening the page. */
.grid2 { display:grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px 18px; }
h3 { font-size: 13.5px; margin: 14px 0 2px; font-weight: 650; }
/* A scroll container whose edge shadows say that more lies that way: the panel-coloured covers scroll with
   the content (local) and hide a shadow once its edge is reached; the shadows stay put (scroll).
   .table-scroll: the same, for the combined table's page (combined_table_output.cpp). */
.scroll-x, .table-scroll { overflow-x: auto;
  background: linear-gradient(to right, var(--panel) 40%, rgba(255,255,255,0)) left center / 28px 100% no-repeat local,
              linear-gradient(to left, var(--panel) 40%, rgba(255,255,255,0)) right center / 28px 100% no-repeat local,
              radial-gradient(farthest-side at 0 50%, rgba(31,41,51,.14), rgba(31,41,51,0)) left center / 10px 100% no-repeat scroll,
              radial-gradient(farthest-side at 100% 50%, rgba(31,41,51,.14), rgba(31,41,51,0)) right center / 10px 100% no-repeat scroll; }
figure.chart { margin: 0 0 8px; }
ul.legend { display:flex; flex-wrap:wrap; gap: 2px 16px; list-style:none; margin: 4px 0 6px; padding:0; font-size: 12.5px; }
ul.legend li { white-space: nowrap; }
p.caption { color: var(--muted); font-size: 12.5px; margin: 0 0 6px; }
/* max-width: scales down with its column; the min-width on each <svg> keeps its smallest text legible. */
svg.chart { max-width: 100%; height: auto; display: block; }
svg text { font-family: inherit; fill: var(--ink); }
svg text.tick { font-size: 11px; fill: var(--muted); }
svg text.axis-title { font-size: 12px; fill: var(--muted); }
svg text.label { font-size: 12.5px; }
svg text.value { font-size: 12px; font-weight: 600; }
svg text.panel { font-size: 11px; fill: var(--muted); }
svg text.oom { font-size: 12.5px; fill: var(--fail); font-weight: 600; }
p.note { color: var(--muted); font-style: italic; }
ul.problems { color: var(--fail); font-size: 12.5px; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 8px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
/* Phones: slimmer margins and one column, so the content gets most of the 390 px. */
@media (max-width: 700px) {
  main { padding: 12px 8px 32px; }
  header.verdict, section { padding: 14px 12px; border-radius: 8px; margin-bottom: 12px; }
  header h1 { font-size: 19px; }
  .grid2 { grid-template-columns: minmax(0, 1fr); }
}
)css";

}  // namespace zb::reports
