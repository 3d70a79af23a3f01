#include "core/exec/reference/kv_collectives.hpp"

#include <cstring>

#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/gradient_ops.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {

std::optional<CollectiveRows> collective_rows_of(const lower::Collective& collective) {
  if (collective.kind == lower::CollectiveKind::all_to_all_v)
    return collective.expert_exchange ? CollectiveRows::expert : CollectiveRows::remap;
  if (collective.messages.empty()) return CollectiveRows::none;
  if (collective.kind == lower::CollectiveKind::all_gather) return CollectiveRows::gather;
  if (collective.kind == lower::CollectiveKind::reduce_scatter) return CollectiveRows::scatter;
  if (collective.kind == lower::CollectiveKind::all_to_all) return CollectiveRows::heads;
  return std::nullopt;
}

std::int64_t send_partials(Transport& transport, const lower::Program& program, int collective, int rank,
                           TensorRows& own, const AttentionDims& dims, const std::string& context) {
  std::int64_t total = 0;
  std::vector<float> rows;
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const lower::Message& message = program.messages.at(static_cast<std::size_t>(m));
    if (message.src != rank) continue;
    Bytes payload = collective_payload_header(m);
    for (const lower::Slice& s : message.slices) {
      if (s.tensor != lower::Tensor::dK && s.tensor != lower::Tensor::dV) {
        throw Error(ExitCode::runtime, rank_location(rank),
                    context + ": its reduce-scatter message " + std::to_string(m) + " lists " +
                        slice_text(s) + "; it carries dK and dV only");
      }
      if (s.rows() <= 0) continue;
      rows.assign(static_cast<std::size_t>(s.rows()) * static_cast<std::size_t>(row_width(dims, s.tensor)),
                  0.0F);
      RowStore& partial = own.of(s.tensor);
      (void)add_present(partial, s.seq, s.begin, s.end, rows);
      partial.erase(s.seq, s.begin, s.end);  // the partial leaves: counted once, on its owner
      const auto at = payload.size();
      payload.resize(at + rows.size() * sizeof(float));
      std::memcpy(payload.data() + at, rows.data(), rows.size() * sizeof(float));
    }
    total += static_cast<std::int64_t>(payload.size() - sizeof(std::int32_t));
    transport.send(message.dst, collective_tag(collective), std::move(payload));
  }
  return total;
}

void add_partials(const lower::Program& program, int collective, int rank,
                  const std::map<int, Bytes>& received, TensorRows& own, const AttentionDims& dims,
                  const std::string& context) {
  TensorRows arrived(dims);
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const auto payload = received.find(m);
    if (payload == received.end()) continue;  // a message for another rank
    const lower::Message& message = program.messages.at(static_cast<std::size_t>(m));
    const std::span<const std::byte> rows = collective_rows(program, m, rank, payload->second, context);
    if (const std::string problem = unpack_payload(message, dims, rows, program.sequences, arrived);
        !problem.empty()) {
      throw Error(ExitCode::runtime, rank_location(rank),
                  context + ": the partial gradients from rank " + std::to_string(message.src) +
                      " do not fit message " + std::to_string(m) + ": " + problem);
    }
    for (const lower::Slice& s : message.slices) {
      if (s.rows() <= 0) continue;
      add_rows(own.of(s.tensor), s.seq, s.begin, s.end, arrived.of(s.tensor).rows(s.seq, s.begin, s.end));
      arrived.of(s.tensor).erase(s.seq, s.begin, s.end);
    }
  }
}

}  // namespace zb::reference
