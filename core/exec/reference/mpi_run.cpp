#include "core/exec/reference/mpi_run.hpp"

#include <cstring>

#include "core/exec/reference/mpi_transport.hpp"
#include "core/exec/reference/rank_location.hpp"
#include "core/plan/plan_format.hpp"
#include "core/exec/reference/result_codec.hpp"

namespace zb::reference {
namespace {

// FNV-1a of the plan as JSON without its wall-clock field: every process plans for itself, and a plan
// that differs between processes would mismatch tags and hang, so it is caught first.
std::uint64_t plan_fingerprint(const plan::Plan& plan) {
  nlohmann::ordered_json json = plan::to_json(plan);
  json.erase("planner_seconds");
  const std::string text = json.dump();
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  return hash;
}

void check_same_plan_everywhere(Transport& transport, const RunInputs& inputs) {
  const std::uint64_t mine = plan_fingerprint(inputs.plan);
  Bytes payload(sizeof mine);
  std::memcpy(payload.data(), &mine, sizeof mine);
  const Tag tag = Tag::make(MessageKind::result, 1);
  for (int r = 0; r < transport.size(); ++r)
    if (r != transport.rank()) transport.send(r, tag, payload);
  for (int r = 0; r < transport.size(); ++r) {
    if (r == transport.rank()) continue;
    const Bytes theirs = transport.recv(r, tag, inputs.options.receive_timeout);
    if (theirs != payload) {
      throw Error(ExitCode::runtime, rank_location(transport.rank()),
                  "process " + std::to_string(r) + " planned a different plan of " + inputs.plan.system +
                      " than this process; the ranks cannot run it together",
                  "the planner must be deterministic for the same scenario and seed");
    }
  }
}

}  // namespace

int mpi_world_size() { return MpiWorld::get().size(); }

std::unique_ptr<Transport> make_mpi_transport() { return std::make_unique<MpiTransport>(MpiWorld::get()); }

std::vector<RankResult> run_mpi_rank(Transport& transport, const RunInputs& inputs) {
  const int me = transport.rank();
  try {
    check_same_plan_everywhere(transport, inputs);
    RankResult mine = RankRunner(inputs, me, transport).run();
    const Bytes encoded = encode_result(mine);
    const Tag tag = Tag::make(MessageKind::result, 0);
    for (int r = 0; r < transport.size(); ++r)
      if (r != me) transport.send(r, tag, encoded);
    std::vector<RankResult> all(static_cast<std::size_t>(transport.size()));
    for (int r = 0; r < transport.size(); ++r)
      all[static_cast<std::size_t>(r)] = r == me ? std::move(mine) : decode_result(transport.recv(r, tag, inputs.options.receive_timeout));
    return all;
  } catch (const RankStalled&) {
    // Not broadcast: every stuck rank reports its own wait, which together explain the stall.
    transport.abandon_pending_sends(std::chrono::milliseconds(1000));
    throw;
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
