#include "core/exec/reference/expert_rows.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/common/error.hpp"
#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

std::uint64_t mix(std::uint64_t h) {
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

// A float in [−1, 1) every rank computes alike from its name: exact in float (a multiple of 2^−20).
float draw(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const std::uint64_t h = mix(mix(mix(a + 0x9E3779B97F4A7C15ULL) ^ b) ^ c);
  return static_cast<float>(static_cast<double>(h >> 43) / static_cast<double>(1ULL << 20)) - 1.0F;
}

// Row `row` of what `src` sends `dst` on the way out in (micro-batch, pass), `width` floats.
void token_row(int src, int dst, int micro_batch, Pass pass, std::int64_t row, std::span<float> out) {
  const std::uint64_t who = (static_cast<std::uint64_t>(src) << 32U) | static_cast<std::uint32_t>(dst);
  const std::uint64_t when = (static_cast<std::uint64_t>(micro_batch) << 1U) | (pass == Pass::bwd ? 1U : 0U);
  for (std::size_t c = 0; c < out.size(); ++c)
    out[c] = draw(who, when, (static_cast<std::uint64_t>(row) << 16U) | c);
}

// Weight (i, j) of matrix `which` (1 or 2) of `member`'s expert in `pass`, scaled by 1/√width so the
// outputs stay of the order of the inputs.
template <typename T>
T weight(int member, Pass pass, int which, std::size_t i, std::size_t j, std::size_t width) {
  const std::uint64_t id = (static_cast<std::uint64_t>(member) << 3U) | (pass == Pass::bwd ? 4U : 0U) |
                           static_cast<std::uint64_t>(which);
  return static_cast<T>(draw(0xE4E7ULL, id, (i << 20U) | j)) / std::sqrt(static_cast<T>(width));
}

template <typename T>
void run_expert(int member, Pass pass, std::span<const T> x, std::span<T> y) {
  const std::size_t w = x.size();
  std::vector<T> hidden(w);
  for (std::size_t i = 0; i < w; ++i) {
    T sum = 0;
    for (std::size_t j = 0; j < w; ++j) sum += weight<T>(member, pass, 1, i, j, w) * x[j];
    hidden[i] = sum / (1 + std::exp(-sum));  // silu
  }
  for (std::size_t i = 0; i < w; ++i) {
    T sum = 0;
    for (std::size_t j = 0; j < w; ++j) sum += weight<T>(member, pass, 2, i, j, w) * hidden[j];
    y[i] = sum;
  }
}

std::tuple<int, int, int> key_of(const lower::Message& m, int sender) {
  return {m.micro_batch, m.pass == Pass::bwd ? 1 : 0, sender};
}

}  // namespace

ExpertLeg expert_leg(const lower::Instr& in) {
  if (in.name == "dispatch" || in.name == "combine bwd") return ExpertLeg::out;
  if (in.name == "combine" || in.name == "dispatch bwd") return ExpertLeg::back;
  return ExpertLeg::out_only;
}

void expert_forward(int member, Pass pass, std::span<const float> x, std::span<float> y) {
  run_expert<float>(member, pass, x, y);
}

void expert_forward(int member, Pass pass, std::span<const double> x, std::span<double> y) {
  run_expert<double>(member, pass, x, y);
}

std::int64_t send_expert_rows(Transport& transport, const lower::Program& program, int collective, int rank,
                              const AttentionDims& dims, ExpertLeg leg, ExpertRowsKept& kept,
                              const std::string& context) {
  std::int64_t total = 0;
  const auto width = static_cast<std::size_t>(dims.q_width());
  std::vector<float> rows;
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const lower::Message& message = program.messages.at(static_cast<std::size_t>(m));
    if (message.src != rank) continue;
    rows.assign(static_cast<std::size_t>(message.rows) * width, 0.0F);
    if (leg != ExpertLeg::back) {
      for (std::int64_t r = 0; r < message.rows; ++r)
        token_row(rank, message.dst, message.micro_batch, message.pass, r,
                  std::span<float>(rows).subspan(static_cast<std::size_t>(r) * width, width));
    } else {
      const auto it = kept.find(key_of(message, message.dst));
      const std::size_t held = it == kept.end() ? 0 : it->second.size() / width;
      if (held != static_cast<std::size_t>(message.rows))
        throw Error(ExitCode::runtime, rank_location(rank),
                    context + ": returns " + std::to_string(message.rows) + " expert rows to rank " +
                        std::to_string(message.dst) + " of the " + std::to_string(held) +
                        " it received from it on the way out");
      for (std::size_t r = 0; r < held; ++r)
        expert_forward(rank, message.pass, std::span<const float>(it->second).subspan(r * width, width),
                       std::span<float>(rows).subspan(r * width, width));
      kept.erase(it);
    }
    Bytes payload = collective_payload_header(m);
    const auto at = payload.size();
    payload.resize(at + rows.size() * sizeof(float));
    std::memcpy(payload.data() + at, rows.data(), rows.size() * sizeof(float));
    total += static_cast<std::int64_t>(payload.size() - at);
    transport.send(message.dst, collective_tag(collective), std::move(payload));
  }
  return total;
}

void accept_expert_rows(const lower::Program& program, int message, int rank,
                        std::span<const std::byte> payload, const AttentionDims& dims, ExpertLeg leg,
                        ExpertRowsKept& kept, const std::string& context) {
  const lower::Message& m = program.messages.at(static_cast<std::size_t>(message));
  const std::span<const std::byte> bytes = collective_rows(program, message, rank, payload, context);
  const auto fail = [&](const std::string& what) {
    throw Error(ExitCode::runtime, rank_location(rank),
                context + ": the expert rows of message " + std::to_string(message) + " from rank " +
                    std::to_string(m.src) + " " + what);
  };
  const auto width = static_cast<std::size_t>(dims.q_width());
  const std::size_t expected = static_cast<std::size_t>(m.rows) * width * sizeof(float);
  if (bytes.size() != expected)
    fail("are " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(m.rows) + " rows (" +
         std::to_string(expected) + " bytes)");
  std::vector<float> rows(static_cast<std::size_t>(m.rows) * width);
  std::memcpy(rows.data(), bytes.data(), bytes.size());
  std::vector<float> sent(width);
  if (leg != ExpertLeg::back) {
    for (std::int64_t r = 0; r < m.rows; ++r) {
      token_row(m.src, rank, m.micro_batch, m.pass, r, sent);
      if (std::memcmp(sent.data(), rows.data() + static_cast<std::size_t>(r) * width,
                      width * sizeof(float)) != 0)
        fail("arrived changed at row " + std::to_string(r));
    }
    if (leg == ExpertLeg::out) kept[key_of(m, m.src)] = std::move(rows);
    return;
  }
  // Back from the experts of m.src: each row is that member's expert on the row this rank sent it.
  std::vector<double> x(width), y(width);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    token_row(rank, m.src, m.micro_batch, m.pass, r, sent);
    for (std::size_t c = 0; c < width; ++c) x[c] = sent[c];
    expert_forward(m.src, m.pass, std::span<const double>(x), std::span<double>(y));
    for (std::size_t c = 0; c < width; ++c) {
      const double got = rows[static_cast<std::size_t>(r) * width + c];
      if (!(std::abs(got - y[c]) <= 1e-4 * (1 + std::abs(y[c]))))
        fail("came back from its expert wrong at row " + std::to_string(r) + ", column " + std::to_string(c) +
             ": " + std::to_string(got) + " against the float64 expert's " + std::to_string(y[c]));
    }
  }
}

}  // namespace zb::reference
