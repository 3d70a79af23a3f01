#include "core/exec/reference/head_all_to_all.hpp"

#include <cstring>

#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

using lower::Tensor;

bool is_gradient(Tensor t) {
  return t == Tensor::dQ || t == Tensor::dK || t == Tensor::dV;
}

// The head columns of a slice, or a runtime error naming `context` (checked before running; this is
// the backstop for a Program built around that check).
std::pair<std::size_t, std::size_t> columns_of(const lower::Slice& s, const HeadMap& heads, int rank,
                                               const std::string& context) {
  const std::optional<HeadColumns> cols = heads.columns(s.heads);
  if (!cols) {
    throw Error(ExitCode::runtime, rank_location(rank),
                context + ": " + slice_text(s) + " carries " + heads.describe(s.heads) +
                    ", which are no whole heads of the reference's " + std::to_string(heads.dims().heads));
  }
  return column_span(*cols, s.tensor, heads.dims().head_dim);
}

}  // namespace

bool carries_partial_gradients(const lower::Message& message) {
  return !message.slices.empty() && is_gradient(message.slices.front().tensor);
}

std::int64_t send_head_slices(Transport& transport, const lower::Program& program, int collective, int rank,
                              TensorRows& own, const HeadMap& heads, bool keep_output,
                              const std::string& context) {
  std::int64_t total = 0;
  std::vector<float> rows;
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const lower::Message& message = program.messages.at(static_cast<std::size_t>(m));
    if (message.src != rank) continue;
    Bytes payload = collective_payload_header(m);
    for (const lower::Slice& s : message.slices) {
      if (s.rows() <= 0) continue;
      const auto [first, last] = columns_of(s, heads, rank, context);
      RowStore& store = own.of(s.tensor);
      if (const auto missing = store.first_missing(s.seq, s.begin, s.end)) {
        throw Error(ExitCode::runtime, rank_location(rank),
                    context + ": cannot send " + slice_text(s) + " (" + heads.describe(s.heads) +
                        ") to rank " + std::to_string(message.dst) + ": token " + std::to_string(*missing) +
                        " is not on this rank");
      }
      rows.resize(static_cast<std::size_t>(s.rows()) * (last - first));
      take_columns(store.rows(s.seq, s.begin, s.end), static_cast<std::size_t>(store.width()), first, last,
                   rows);
      const auto at = payload.size();
      payload.resize(at + rows.size() * sizeof(float));
      std::memcpy(payload.data() + at, rows.data(), rows.size() * sizeof(float));
    }
    for (const lower::Slice& s : message.slices) {  // after packing: one slice's rows may be another's
      const bool leaves = is_gradient(s.tensor) || (s.tensor == Tensor::O && !keep_output);
      if (s.rows() > 0 && leaves) own.of(s.tensor).erase(s.seq, s.begin, s.end);
    }
    total += static_cast<std::int64_t>(payload.size() - sizeof(std::int32_t));
    transport.send(message.dst, collective_tag(collective), std::move(payload));
  }
  return total;
}

void store_head_slices(const lower::Program& program, int message, int rank,
                       std::span<const std::byte> payload, TensorRows& own, const HeadMap& heads,
                       const std::string& context) {
  const lower::Message& m = program.messages.at(static_cast<std::size_t>(message));
  const std::span<const std::byte> bytes = collective_rows(program, message, rank, payload, context);
  std::uint64_t expected = 0;
  for (const lower::Slice& s : m.slices) {
    if (s.rows() <= 0) continue;
    const auto [first, last] = columns_of(s, heads, rank, context);
    expected += static_cast<std::uint64_t>(s.rows()) * (last - first) * sizeof(float);
  }
  if (bytes.size() != expected) {
    throw Error(ExitCode::runtime, rank_location(rank),
                context + ": the rows from rank " + std::to_string(m.src) + " do not fit message " +
                    std::to_string(message) + ": its payload holds " + std::to_string(bytes.size()) +
                    " bytes, its slices' heads " + std::to_string(expected));
  }
  std::size_t at = 0;
  std::vector<float> rows;
  for (const lower::Slice& s : m.slices) {
    if (s.rows() <= 0) continue;
    const auto [first, last] = columns_of(s, heads, rank, context);
    rows.resize(static_cast<std::size_t>(s.rows()) * (last - first));
    std::memcpy(rows.data(), bytes.data() + at, rows.size() * sizeof(float));
    at += rows.size() * sizeof(float);
    put_columns(own.of(s.tensor), s.seq, s.begin, s.end, first, last, rows, is_gradient(s.tensor));
  }
}

void add_head_partials(const lower::Program& program, int collective, int rank,
                       const std::map<int, Bytes>& received, TensorRows& own, const HeadMap& heads,
                       const std::string& context) {
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const auto payload = received.find(m);
    if (payload != received.end()) store_head_slices(program, m, rank, payload->second, own, heads, context);
  }
}

}  // namespace zb::reference
