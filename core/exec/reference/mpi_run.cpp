#include "core/exec/reference/mpi_run.hpp"

#include <cstring>

#include "core/exec/reference/mpi_transport.hpp"
#include "core/exec/reference/result_codec.hpp"

namespace zb::reference {

int mpi_world_size() { return MpiWorld::get().size(); }

std::vector<RankResult> run_mpi_rank(const RunInputs& inputs) {
  MpiTransport transport(MpiWorld::get());
  const int me = transport.rank();
  try {
    RankResult mine = RankRunner(inputs, me, transport).run();
    const Bytes encoded = encode_result(mine);
    const Tag tag = Tag::make(MessageKind::result, 0);
    for (int r = 0; r < transport.size(); ++r)
      if (r != me) transport.send(r, tag, encoded);
    std::vector<RankResult> all(static_cast<std::size_t>(transport.size()));
    for (int r = 0; r < transport.size(); ++r)
      all[static_cast<std::size_t>(r)] = r == me ? std::move(mine) : decode_result(transport.recv(r, tag, inputs.options.receive_timeout));
    return all;
  } catch (const PeerFailed&) {
    transport.abandon_pending_sends(std::chrono::milliseconds(1000));
    throw;
  } catch (const std::exception& e) {
    const std::string reason = e.what();
    Bytes payload(reason.size());
    std::memcpy(payload.data(), reason.data(), reason.size());
    for (int r = 0; r < transport.size(); ++r)
      if (r != me) transport.send(r, Tag::make(MessageKind::abort, 0), payload);
    transport.abandon_pending_sends(std::chrono::milliseconds(1000));
    throw;
  }
}

}  // namespace zb::reference
