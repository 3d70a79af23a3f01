#include "core/exec/reference/all_to_all_v.hpp"

#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/wire.hpp"

namespace zb::reference {

Tag collective_tag(int collective) {
  return Tag::make(MessageKind::collective, static_cast<std::uint64_t>(collective));
}

Bytes collective_payload_header(int message) {
  Bytes payload(sizeof(std::int32_t));
  const auto id = static_cast<std::int32_t>(message);
  std::memcpy(payload.data(), &id, sizeof id);
  return payload;
}

std::span<const std::byte> collective_rows(const lower::Program& program, int message, int rank,
                                           std::span<const std::byte> payload, const std::string& context) {
  const lower::Message& m = program.messages.at(static_cast<std::size_t>(message));
  const auto fail = [&](const std::string& what) {
    throw Error(ExitCode::runtime, rank_location(rank),
                context + ": the rows from rank " + std::to_string(m.src) + " " + what);
  };
  std::int32_t id = -1;
  if (payload.size() < sizeof id) fail("are shorter than their header");
  std::memcpy(&id, payload.data(), sizeof id);
  if (id != message)
    fail("are message " + std::to_string(id) + ", expected message " + std::to_string(message));
  return payload.subspan(sizeof id);
}

std::vector<int> incoming_messages(const lower::Program& program, int collective, int rank) {
  std::vector<int> in;
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages)
    if (program.messages.at(static_cast<std::size_t>(m)).dst == rank) in.push_back(m);
  return in;
}

std::int64_t send_collective(Transport& transport, const lower::Program& program, int collective, int rank,
                             TensorRows& own, const AttentionDims& dims, const std::string& context,
                             SentRows sent) {
  std::int64_t total = 0;
  const TensorRows* const sources[] = {&own};
  for (const int m : program.collectives.at(static_cast<std::size_t>(collective)).messages) {
    const lower::Message& message = program.messages.at(static_cast<std::size_t>(m));
    if (message.src != rank) continue;
    Bytes payload = collective_payload_header(m);
    if (const auto missing = pack_payload(message, dims, sources, payload)) {
      throw Error(ExitCode::runtime, rank_location(rank),
                  context + ": cannot send " + slice_text(message.slices[missing->slice]) + " to rank " +
                      std::to_string(message.dst) + ": token " + std::to_string(missing->token) +
                      " is not on this rank");
    }
    for (const lower::Slice& s : message.slices) {
      const bool keep = sent == SentRows::kept || (sent == SentRows::o_kept && s.tensor == lower::Tensor::O);
      if (s.rows() > 0 && !keep) own.of(s.tensor).erase(s.seq, s.begin, s.end);
    }
    total += static_cast<std::int64_t>(payload.size() - sizeof(std::int32_t));
    transport.send(message.dst, collective_tag(collective), std::move(payload));
  }
  return total;
}

void accept_collective_message(const lower::Program& program, int message, int rank,
                               std::span<const std::byte> payload, TensorRows& own, const AttentionDims& dims,
                               const std::string& context) {
  const lower::Message& m = program.messages.at(static_cast<std::size_t>(message));
  const std::span<const std::byte> rows = collective_rows(program, message, rank, payload, context);
  if (const std::string problem = unpack_payload(m, dims, rows, program.sequences, own); !problem.empty()) {
    throw Error(ExitCode::runtime, rank_location(rank),
                context + ": the rows from rank " + std::to_string(m.src) + " do not fit message " +
                    std::to_string(message) + ": " + problem);
  }
}

}  // namespace zb::reference
