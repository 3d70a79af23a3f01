#include "core/exec/reference/expert_rows.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/rng.hpp"
#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

// A float in [−1, 1) every rank computes alike from its name: exact in float (a multiple of 2^−20).
float draw(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const std::uint64_t h = mix64(mix64(mix64(a + 0x9E3779B97F4A7C15ULL) ^ b) ^ c);
  return static_cast<float>(static_cast<double>(h >> 43) / static_cast<double>(1ULL << 20)) - 1.0F;
}

// Row `row` of what `src` sends `dst` on the way out in (micro-batch, pass), `width` floats.
void token_row(int src, int dst, int micro_batch, Pass pass, std::int64_t row, std::span<float> out) {
  const std::uint64_t who = (static_cast<std::uint64_t>(src) << 32U) | static_cast<std::uint32_t>(dst);
  const std::uint64_t when = (static_cast<std::uint64_t>(micro_batch) << 1U) | (pass == Pass::bwd ? 1U : 0U);
  for (std::size_t c = 0; c < out.size(); ++c)
    out[c] = draw(who, when, (static_cast<std::uint64_t>(row) << 16U) | c);
}

// The stand-in expert of `member` in `pass` at `width`: its two matrices, each weight drawn from (member,
// pass, matrix, i, j) and scaled by 1/√width so the outputs stay of the order of the inputs. Built once per
// message, applied to each of its rows.
template <typename T>
class StandInExpert {
 public:
  StandInExpert(int member, Pass pass, std::size_t width)
      : width_(width), w1_(width * width), w2_(width * width) {
    const T root = std::sqrt(static_cast<T>(width));
    for (const int which : {1, 2}) {
      const std::uint64_t id = (static_cast<std::uint64_t>(member) << 3U) | (pass == Pass::bwd ? 4U : 0U) |
                               static_cast<std::uint64_t>(which);
      std::vector<T>& w = which == 1 ? w1_ : w2_;
      for (std::size_t i = 0; i < width; ++i)
        for (std::size_t j = 0; j < width; ++j)
          w[i * width + j] = static_cast<T>(draw(0xE4E7ULL, id, (i << 20U) | j)) / root;
    }
  }

  // y = W2·silu(W1·x).
  void apply(std::span<const T> x, std::span<T> y) const {
    std::vector<T> hidden(width_);
    for (std::size_t i = 0; i < width_; ++i) {
      T sum = 0;
      for (std::size_t j = 0; j < width_; ++j) sum += w1_[i * width_ + j] * x[j];
      hidden[i] = sum / (1 + std::exp(-sum));  // silu
    }
    for (std::size_t i = 0; i < width_; ++i) {
      T sum = 0;
      for (std::size_t j = 0; j < width_; ++j) sum += w2_[i * width_ + j] * hidden[j];
      y[i] = sum;
    }
  }

 private:
  std::size_t width_;
  std::vector<T> w1_, w2_;
};

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
  StandInExpert<float>(member, pass, x.size()).apply(x, y);
}

void expert_forward(int member, Pass pass, std::span<const double> x, std::span<double> y) {
  StandInExpert<double>(member, pass, x.size()).apply(x, y);
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
      const StandInExpert<float> expert(rank, message.pass, width);
      for (std::size_t r = 0; r < held; ++r)
        expert.apply(std::span<const float>(it->second).subspan(r * width, width),
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
  const StandInExpert<double> expert(m.src, m.pass, width);
  std::vector<double> x(width), y(width);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    token_row(rank, m.src, m.micro_batch, m.pass, r, sent);
    for (std::size_t c = 0; c < width; ++c) x[c] = sent[c];
    expert.apply(x, y);
    for (std::size_t c = 0; c < width; ++c) {
      const double got = rows[static_cast<std::size_t>(r) * width + c];
      if (!(std::abs(got - y[c]) <= 1e-4 * (1 + std::abs(y[c]))))
        fail("came back from its expert wrong at row " + std::to_string(r) + ", column " + std::to_string(c) +
             ": " + std::to_string(got) + " against the float64 expert's " + std::to_string(y[c]));
    }
  }
}

}  // namespace zb::reference
