#include "core/exec/cuda/verify_compute.hpp"

#include <algorithm>

#include "core/exec/cuda/cuda_check.hpp"
#include "kernels/cuda_attention.hpp"
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
#include "kernels/cuda_sdpa.hpp"
#endif

namespace zb::cuda {

namespace kc = kernels::cuda;

namespace {

constexpr std::size_t kBf16 = 2;

}  // namespace

struct VerifyCompute::Instruction {
  const AttentionOperands* operands = nullptr;
  kc::AttentionSchedule own;
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
  kc::SdpaPlan sdpa;
#endif
  std::size_t q = 0, k = 0, v = 0, o = 0, lse = 0, d_o = 0, dq = 0, dk = 0, dv = 0;
  std::size_t q_bytes = 0, kv_bytes = 0, lse_bytes = 0;
  HostOperands written;  // kept for the oracle: the backward's saved activations are part of its input
};

VerifyCompute::VerifyCompute(const lower::Program& program, int rank, AttentionKernel kernel,
                             const VerifyLayout& layout, const RankComm& comm, DeviceArena& arena)
    : program_(program), rank_(rank), kernel_(kernel), comm_(comm), arena_(arena) {
  index_of_.assign(program.ranks.at(static_cast<std::size_t>(rank)).instrs.size(), -1);
  std::size_t workspace = 0;
  for (const AttentionOperands& a : layout.attention) {
    const std::string where = "backend cuda: correctness pass, " + lower::describe(program, rank, a.instr);
    if (a.backward && kernel_ == AttentionKernel::own)
      throw Error(ExitCode::bad_input, Location{},
                  where + ": the project's own attention kernels have no backward pass",
                  "run with cuDNN's SDPA or a forward-only scenario (\"passes\": \"fwd\")");
    auto in = std::make_unique<Instruction>();
    in->operands = &a;
    const auto& s = a.packed.shape;
    in->q_bytes = static_cast<std::size_t>(s.q_tokens * s.heads * s.head_dim) * kBf16;
    in->kv_bytes = static_cast<std::size_t>(s.kv_tokens * s.kv_heads * s.head_dim) * kBf16;
    in->lse_bytes = static_cast<std::size_t>(s.out_rows * s.heads) * sizeof(float);
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
    if (kernel_ == AttentionKernel::cudnn) {
      check_status(in->sdpa.build(s, a.packed.descs, kc::ElementType::bf16, a.backward), rank, where);
      workspace = std::max(workspace, in->sdpa.workspace_bytes());
    }
#endif
    if (kernel_ == AttentionKernel::own) check_status(in->own.build(s, a.packed.descs), rank, where);
    in->q = arena.reserve(in->q_bytes);
    in->k = arena.reserve(in->kv_bytes);
    in->v = arena.reserve(in->kv_bytes);
    in->o = arena.reserve(in->q_bytes);
    in->lse = arena.reserve(in->lse_bytes);
    if (a.backward) {
      in->d_o = arena.reserve(in->q_bytes);
      in->dq = arena.reserve(in->q_bytes);
      in->dk = arena.reserve(in->kv_bytes);
      in->dv = arena.reserve(in->kv_bytes);
    }
    index_of_[static_cast<std::size_t>(a.instr)] = static_cast<int>(instructions_.size());
    instructions_.push_back(std::move(in));
  }
  workspace_ = arena.reserve(workspace);
}

VerifyCompute::~VerifyCompute() = default;

void VerifyCompute::write_inputs(const QkvGenerator& generator) {
  const std::string context = "backend cuda: writing the correctness pass's inputs";
  auto upload = [&](std::size_t offset, const void* data, std::size_t bytes) {
    if (bytes > 0)
      check_cuda(cudaMemcpy(arena_.at(offset), data, bytes, cudaMemcpyHostToDevice), rank_, "cudaMemcpy",
                 context);
  };
  for (const auto& in : instructions_) {
    in->written = host_operands(*in->operands, generator);
    const HostOperands& h = in->written;
    upload(in->q, h.q.data(), h.q.size() * kBf16);
    upload(in->k, h.k.data(), h.k.size() * kBf16);
    upload(in->v, h.v.data(), h.v.size() * kBf16);
    if (!in->operands->backward) continue;
    upload(in->o, h.o.data(), h.o.size() * kBf16);
    upload(in->d_o, h.d_o.data(), h.d_o.size() * kBf16);
    upload(in->lse, h.lse.data(), h.lse.size() * sizeof(float));
  }
}

void VerifyCompute::launch(int id, cudaStream_t stream) const {
  const int index = index_of_.at(static_cast<std::size_t>(id));
  if (index < 0) return;  // a GEMM or an attention without work
  const Instruction& in = *instructions_[static_cast<std::size_t>(index)];
  const AttentionOperands& a = *in.operands;
  const std::string where = "backend cuda: correctness pass, " + lower::describe(program_, rank_, id);
  const auto row_bytes = static_cast<std::size_t>(a.packed.shape.kv_heads * a.packed.shape.head_dim) * kBf16;
  for (const auto& [runs, operand] : {std::pair{&a.k, in.k}, std::pair{&a.v, in.v}}) {
    for (const OperandRun& run : *runs) {
      if (run.message < 0) continue;  // the rank's own rows, written before the pass
      char* into =
          static_cast<char*>(arena_.at(operand)) + static_cast<std::size_t>(run.packed_row) * row_bytes;
      const char* from = static_cast<const char*>(comm_.received(run.message)) + run.source_byte;
      check_cuda(cudaMemcpyAsync(into, from, static_cast<std::size_t>(run.rows) * row_bytes,
                                 cudaMemcpyDeviceToDevice, stream),
                 rank_, "cudaMemcpyAsync",
                 where + ": copying the K/V rows of message " + std::to_string(run.message));
    }
  }
  auto at = [&](std::size_t offset) { return arena_.at(offset); };
  if (a.backward) {
    for (const auto& [offset, bytes] :
         {std::pair{in.dq, in.q_bytes}, std::pair{in.dk, in.kv_bytes}, std::pair{in.dv, in.kv_bytes}})
      check_cuda(cudaMemsetAsync(at(offset), 0, bytes, stream), rank_, "cudaMemsetAsync",
                 where);  // the kernels accumulate
  }
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
  if (kernel_ == AttentionKernel::cudnn) {
    if (a.backward) {
      const kc::SdpaBackwardTensors t{
          at(in.q),  at(in.k),  at(in.v),  at(in.o),      at(in.d_o), static_cast<const float*>(at(in.lse)),
          at(in.dq), at(in.dk), at(in.dv), at(workspace_)};
      check_status(kc::sdpa_backward(in.sdpa, t, stream), rank_, where);
    } else {
      const kc::SdpaForwardTensors t{
          at(in.q), at(in.k), at(in.v), at(in.o), static_cast<float*>(at(in.lse)), at(workspace_)};
      check_status(kc::sdpa_forward(in.sdpa, t, stream), rank_, where);
    }
    return;
  }
#endif
  const kc::AttentionTensors t{
      kc::ElementType::bf16,          at(in.q), at(in.k), at(in.v), kc::ElementType::bf16, at(in.o),
      static_cast<float*>(at(in.lse))};
  check_status(kc::attention_forward(in.own, t, stream), rank_, where);
}

std::vector<InstrCheck> VerifyCompute::check(const QkvGenerator& generator) const {
  const std::string context = "backend cuda: reading back the correctness pass's outputs";
  auto download = [&](auto& into, std::size_t offset, std::size_t bytes) {
    into.resize(bytes / sizeof(into[0]));
    if (bytes > 0)
      check_cuda(cudaMemcpy(into.data(), arena_.at(offset), bytes, cudaMemcpyDeviceToHost), rank_,
                 "cudaMemcpy", context);
  };
  std::vector<InstrCheck> checks;
  for (const auto& in : instructions_) {
    DeviceResults r;
    if (in->operands->backward) {
      download(r.dq, in->dq, in->q_bytes);
      download(r.dk, in->dk, in->kv_bytes);
      download(r.dv, in->dv, in->kv_bytes);
    } else {
      download(r.o, in->o, in->q_bytes);
      download(r.lse, in->lse, in->lse_bytes);
    }
    checks.push_back(check_attention(*in->operands, in->written, r, generator,
                                     kernel_ == AttentionKernel::cudnn,
                                     lower::describe(program_, rank_, in->operands->instr)));
  }
  return checks;
}

}  // namespace zb::cuda
