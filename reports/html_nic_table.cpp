// The measured-NIC table of the HTML report: what each NIC's byte counters moved during the layer,
// next to what the Program's transfers should have put on it (LinkLoad::expected_bytes), so a reader
// sees at once whether the routing used the NICs the plan says (docs/METRICS.md, "Measured NIC bytes").
#include <fmt/format.h>

#include "reports/html_charts.hpp"
#include "reports/number_format.hpp"
#include "reports/svg.hpp"

namespace zb::reports {
namespace {

std::string bytes_cell(double bytes) {
  return bytes >= 0 ? format_si(bytes) + "B" : "–";
}

std::string ratio_cell(double measured, double expected) {
  if (!(expected > 0)) return measured > 0 ? "only measured" : "–";
  return format_ratio(measured / expected);
}

}  // namespace

std::string measured_nic_table(const RunMetrics& metrics) {
  const std::string note =
      R"(<p class="note">Measured: bytes counted by each NIC's counters while the layer ran (frames with their )"
      R"(headers), beside the bytes the Program's transfers put on it; a ratio near 1 means the NICs carried what the plan says.</p>)";
  std::string html =
      "<table class=\"nics\"><thead><tr><th>NIC</th><th>tx measured</th><th>tx expected</th><th>tx ratio</th>"
      "<th>rx measured</th><th>rx expected</th><th>rx ratio</th></tr></thead><tbody>";
  for (const NicMetrics& nic : metrics.nics) {
    html += fmt::format(
        "<tr><td>n{} nic{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        nic.node, nic.nic, bytes_cell(nic.tx_bytes), bytes_cell(nic.expected_tx_bytes),
        ratio_cell(nic.tx_bytes, nic.expected_tx_bytes), bytes_cell(nic.rx_bytes),
        bytes_cell(nic.expected_rx_bytes), ratio_cell(nic.rx_bytes, nic.expected_rx_bytes));
  }
  return note + scroll_x(html + "</tbody></table>");
}

}  // namespace zb::reports
