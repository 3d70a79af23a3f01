#include "core/exec/reference/expert_rows.hpp"

#include <cstring>
#include <vector>

#include "core/common/error.hpp"
#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

// A float every sender and receiver compute alike, exact in float (below 2^24), different for neighbouring
// rows, columns and messages.
float stamp(int message, std::int64_t row, int column) {
  const auto v = (static_cast<std::uint64_t>(message) * 7919U + static_cast<std::uint64_t>(row) * 131U +
                  static_cast<std::uint64_t>(column)) %
                 (1U << 20);
  return static_cast<float>(v);
}

}  // namespace

std::int64_t send_expert_rows(Transport& transport, const lower::Program& program, int collective, int rank,
                              const AttentionDims& dims) {
  std::int64_t total = 0;
  const int width = dims.q_width();
  std::vector<float> rows;
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const lower::Message& message = program.messages.at(static_cast<std::size_t>(m));
    if (message.src != rank) continue;
    rows.resize(static_cast<std::size_t>(message.rows) * static_cast<std::size_t>(width));
    for (std::int64_t r = 0; r < message.rows; ++r)
      for (int c = 0; c < width; ++c)
        rows[static_cast<std::size_t>(r) * static_cast<std::size_t>(width) + static_cast<std::size_t>(c)] =
            stamp(m, r, c);
    Bytes payload = collective_payload_header(m);
    const auto at = payload.size();
    payload.resize(at + rows.size() * sizeof(float));
    std::memcpy(payload.data() + at, rows.data(), rows.size() * sizeof(float));
    total += static_cast<std::int64_t>(payload.size() - at);
    transport.send(message.dst, collective_tag(collective), std::move(payload));
  }
  return total;
}

void check_expert_rows(const lower::Program& program, int message, int rank,
                       std::span<const std::byte> payload, const AttentionDims& dims,
                       const std::string& context) {
  const lower::Message& m = program.messages.at(static_cast<std::size_t>(message));
  const std::span<const std::byte> rows = collective_rows(program, message, rank, payload, context);
  const auto fail = [&](const std::string& what) {
    throw Error(ExitCode::runtime, rank_location(rank),
                context + ": the expert rows of message " + std::to_string(message) + " from rank " +
                    std::to_string(m.src) + " " + what);
  };
  const int width = dims.q_width();
  const auto expected = static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(width) * sizeof(float);
  if (rows.size() != expected)
    fail("are " + std::to_string(rows.size()) + " bytes, expected " + std::to_string(m.rows) + " rows (" +
         std::to_string(expected) + " bytes)");
  std::vector<float> values(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(width));
  std::memcpy(values.data(), rows.data(), rows.size());
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (int c = 0; c < width; ++c)
      if (values[static_cast<std::size_t>(r) * static_cast<std::size_t>(width) +
                 static_cast<std::size_t>(c)] != stamp(message, r, c))
        fail("arrived changed at row " + std::to_string(r) + ", column " + std::to_string(c));
}

}  // namespace zb::reference
