#include "core/exec/cuda/rank_comm.hpp"

#include <algorithm>
#include <limits>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/verify_oracle.hpp"

namespace zb::cuda {

using lower::CollectiveKind;
using lower::Instr;
using lower::InstrKind;

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// Elements of bf16 for `bytes` (reductions add bf16 values; odd byte counts round up).
std::size_t bf16_count(std::int64_t bytes) {
  return static_cast<std::size_t>((std::max<std::int64_t>(bytes, 0) + 1) / 2);
}

int member_index(const lower::Collective& c, int rank) {
  const auto it = std::find(c.ranks.begin(), c.ranks.end(), rank);
  return it == c.ranks.end() ? -1 : static_cast<int>(it - c.ranks.begin());
}

}  // namespace

RankComm::RankComm(const lower::Program& program, int rank, CudaWorld& world, DeviceArena& arena,
                   const VerifyLayout* verify, const AttentionDims& dims)
    : program_(program), rank_(rank), world_(world), arena_(arena), verify_(verify), dims_(dims) {
  received_.assign(program.messages.size(), kNone);
  generated_.assign(program.messages.size(), kNone);
  if (verify_ != nullptr)
    for (const int m : verify_->generated)
      generated_[static_cast<std::size_t>(m)] = arena.reserve(static_cast<std::size_t>(message_bytes(m)));
  collective_out_.assign(program.collectives.size(), kNone);
  communicators_.assign(program.collectives.size(), nullptr);
  std::size_t staging = 0;
  for (const Instr& in : program.ranks.at(static_cast<std::size_t>(rank)).instrs) {
    if (in.kind == InstrKind::recv && received_[static_cast<std::size_t>(in.message)] == kNone)
      received_[static_cast<std::size_t>(in.message)] =
          arena.reserve(static_cast<std::size_t>(message_bytes(in.message)));
    if (in.kind == InstrKind::send)
      staging = std::max(staging, static_cast<std::size_t>(in.offset + in.bytes));
  }
  for (std::size_t ci = 0; ci < program.collectives.size(); ++ci) {
    const lower::Collective& c = program.collectives[ci];
    const int me = member_index(c, rank);
    const auto members = c.ranks.size();
    const std::size_t shard = bf16_count(c.bytes) * 2;
    // NCCL collectives over a member set need its communicator: every rank takes part in the split.
    const bool nccl_collective = c.kind == CollectiveKind::all_gather ||
                                 c.kind == CollectiveKind::reduce_scatter ||
                                 c.kind == CollectiveKind::all_reduce;
    if (nccl_collective) communicators_[ci] = world.group(c.ranks);
    if (me < 0) continue;
    switch (c.kind) {
      case CollectiveKind::all_gather:
        staging = std::max(staging, shard);
        collective_out_[ci] = arena.reserve(shard * members);
        break;
      case CollectiveKind::reduce_scatter:
        staging = std::max(staging, shard * members);
        collective_out_[ci] = arena.reserve(shard);
        break;
      case CollectiveKind::all_reduce:
        collective_out_[ci] = arena.reserve(shard);  // in place
        break;
      case CollectiveKind::all_to_all:
        staging = std::max(staging, shard);
        collective_out_[ci] = arena.reserve(shard);
        break;
      case CollectiveKind::all_to_all_v:
        for (const int m : c.messages) {
          const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
          if (msg.src == rank) staging = std::max(staging, static_cast<std::size_t>(msg.bytes));
          if (msg.dst == rank)
            received_[static_cast<std::size_t>(m)] =
                arena.reserve(static_cast<std::size_t>(message_bytes(m)));
        }
        break;
    }
  }
  staging_ = arena.reserve(staging);
  if (program.gpus_per_node > 0 && program.world_size > program.gpus_per_node)
    rail_ = world.rail(program.gpus_per_node);
}

std::string RankComm::where(int id) const {
  return "backend cuda: " + lower::describe(program_, rank_, id);
}

std::int64_t RankComm::message_bytes(int message) const {
  const lower::Message& m = program_.messages[static_cast<std::size_t>(message)];
  return verify_ != nullptr ? payload_of(m, dims_).bytes : m.bytes;
}

lower::ByteRange RankComm::leg_bytes(const Instr& leg) const {
  if (verify_ == nullptr) return {leg.offset, leg.offset + leg.bytes};
  const lower::Message& m = program_.messages[static_cast<std::size_t>(leg.message)];
  return lower::payload_fragment(m, payload_of(m, dims_).bytes, leg.offset, leg.bytes);
}

void RankComm::write_payloads(const reference::QkvGenerator& generator) const {
  if (verify_ == nullptr) return;
  for (const int m : verify_->generated) {
    const std::vector<std::uint16_t> bits =
        generated_payload(program_.messages[static_cast<std::size_t>(m)], dims_, generator);
    check_cuda(
        cudaMemcpy(arena_.at(generated_[static_cast<std::size_t>(m)]), bits.data(), bits.size() * 2,
                   cudaMemcpyHostToDevice),
        rank_, "cudaMemcpy",
        "backend cuda: writing the payload of message " + std::to_string(m) + " for the correctness pass");
  }
}

const void* RankComm::received(int message) const {
  const std::size_t at = received_.at(static_cast<std::size_t>(message));
  if (at == kNone)
    fail(rank_,
         "backend cuda: message " + std::to_string(message) + " has no receive buffer on this rank (a bug)");
  return arena_.at(at);
}

const void* RankComm::send_source(int id) const {
  const Instr& in = program_.instr(rank_, id);
  if (verify_ != nullptr) {  // the buffer this rank forwards, or the payload it wrote
    const auto begin = static_cast<std::size_t>(leg_bytes(in).begin);
    const int forwarded = verify_->forwards[static_cast<std::size_t>(in.message)];
    if (forwarded >= 0) return static_cast<const char*>(received(forwarded)) + begin;
    return static_cast<const char*>(arena_.at(generated_[static_cast<std::size_t>(in.message)])) + begin;
  }
  const auto offset = static_cast<std::size_t>(in.offset);
  // A relay leg forwards what it received of this message; a ring forward sends the buffer it read.
  if (const std::size_t own = received_[static_cast<std::size_t>(in.message)]; own != kNone)
    return static_cast<const char*>(arena_.at(own)) + offset;
  for (const int m : in.reads) {
    const std::size_t from = received_.at(static_cast<std::size_t>(m));
    if (from != kNone && program_.messages[static_cast<std::size_t>(m)].bytes >= in.offset + in.bytes)
      return static_cast<const char*>(arena_.at(from)) + offset;
  }
  return static_cast<const char*>(arena_.at(staging_)) + offset;
}

void RankComm::issue(const IssueItem& item, cudaStream_t stream) const {
  const std::string context =
      item.calls.empty() ? std::string("backend cuda") : where(item.calls.front().instr);
  ncclComm_t comm = item.communicator == Communicator::rail ? rail_ : world_.world();
  if (comm == nullptr) fail(rank_, context + ": a rail step on a single node (a bug in the NCCL order)");
  check_nccl(ncclGroupStart(), rank_, "ncclGroupStart", context);
  for (const NcclCall& call : item.calls) {
    if (call.kind == CallKind::collective) {
      issue_collective(call, stream);
      continue;
    }
    const Instr& in = program_.instr(rank_, call.instr);
    const lower::ByteRange range = leg_bytes(in);
    if (range.size() <= 0) continue;  // both ends skip it: they move the same fragment
    const auto bytes = static_cast<std::size_t>(range.size());
    const int peer = rank_in(program_, item.communicator, call.peer);
    if (call.kind == CallKind::send) {
      check_nccl(ncclSend(send_source(call.instr), bytes, ncclUint8, peer, comm, stream), rank_, "ncclSend",
                 where(call.instr));
    } else {
      void* into =
          static_cast<char*>(arena_.at(received_[static_cast<std::size_t>(in.message)])) + range.begin;
      check_nccl(ncclRecv(into, bytes, ncclUint8, peer, comm, stream), rank_, "ncclRecv", where(call.instr));
    }
  }
  check_nccl(ncclGroupEnd(), rank_, "ncclGroupEnd", context);
}

void RankComm::issue_collective(const NcclCall& call, cudaStream_t stream) const {
  const lower::Collective& c = program_.collectives[static_cast<std::size_t>(call.collective)];
  const std::size_t count = bf16_count(c.bytes);
  const void* staging = arena_.at(staging_);
  void* out = collective_out_[static_cast<std::size_t>(call.collective)] == kNone
                  ? nullptr
                  : arena_.at(collective_out_[static_cast<std::size_t>(call.collective)]);
  ncclComm_t comm = communicators_[static_cast<std::size_t>(call.collective)];
  const std::string context = where(call.instr);
  switch (c.kind) {
    case CollectiveKind::all_gather:
      check_nccl(ncclAllGather(staging, out, count, ncclBfloat16, comm, stream), rank_, "ncclAllGather",
                 context);
      return;
    case CollectiveKind::reduce_scatter:
      check_nccl(ncclReduceScatter(staging, out, count, ncclBfloat16, ncclSum, comm, stream), rank_,
                 "ncclReduceScatter", context);
      return;
    case CollectiveKind::all_reduce:
      check_nccl(ncclAllReduce(out, out, count, ncclBfloat16, ncclSum, comm, stream), rank_, "ncclAllReduce",
                 context);
      return;
    case CollectiveKind::all_to_all: {
      const std::size_t peers = c.ranks.size() > 1 ? c.ranks.size() - 1 : 1;
      const std::size_t part = static_cast<std::size_t>(std::max<std::int64_t>(c.bytes, 0)) / peers;
      if (part == 0) return;
      std::size_t slot = 0;
      for (const int peer : c.ranks) {
        if (peer == rank_) continue;
        check_nccl(ncclSend(static_cast<const char*>(staging) + slot * part, part, ncclUint8, peer,
                            world_.world(), stream),
                   rank_, "ncclSend", context);
        check_nccl(
            ncclRecv(static_cast<char*>(out) + slot * part, part, ncclUint8, peer, world_.world(), stream),
            rank_, "ncclRecv", context);
        ++slot;
      }
      return;
    }
    case CollectiveKind::all_to_all_v:
      for (const int m : c.messages) {
        const lower::Message& msg = program_.messages[static_cast<std::size_t>(m)];
        if (message_bytes(m) <= 0) continue;
        const auto bytes = static_cast<std::size_t>(message_bytes(m));
        const void* from = generated_[static_cast<std::size_t>(m)] != kNone
                               ? arena_.at(generated_[static_cast<std::size_t>(m)])
                               : staging;
        if (msg.src == rank_)
          check_nccl(ncclSend(from, bytes, ncclUint8, msg.dst, world_.world(), stream), rank_, "ncclSend",
                     context);
        if (msg.dst == rank_)
          check_nccl(ncclRecv(arena_.at(received_[static_cast<std::size_t>(m)]), bytes, ncclUint8, msg.src,
                              world_.world(), stream),
                     rank_, "ncclRecv", context);
      }
      return;
  }
}

}  // namespace zb::cuda
