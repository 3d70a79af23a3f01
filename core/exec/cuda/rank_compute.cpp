#include "core/exec/cuda/rank_compute.hpp"

#include <algorithm>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/verify_layout.hpp"
#include "kernels/cuda_attention.hpp"
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
#include "kernels/cuda_sdpa.hpp"
#endif
#ifdef ZB_CUDA_EXEC_HAVE_GEMM
#include "kernels/cuda_gemm.hpp"
#endif

namespace zb::cuda {

namespace kc = kernels::cuda;
using lower::Instr;
using lower::InstrKind;

namespace {

constexpr std::size_t kBf16 = 2;
constexpr std::size_t kGemmWorkspace = 32u << 20;  // cuBLASLt's recommendation for Hopper

}  // namespace

AttentionKernel resolve_attention_kernel(AttentionKernel wanted) {
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
  if (wanted == AttentionKernel::own) return wanted;
  const kernels::Status available = kc::cudnn_sdpa_available();
  if (available.ok()) return AttentionKernel::cudnn;
  if (wanted == AttentionKernel::cudnn)
    throw Error(ExitCode::runtime, Location{},
                "backend cuda: cuDNN's SDPA does not load: " + available.message(),
                "install cuDNN 9, or set ZB_CUDA_ATTENTION_KERNEL=zb (forward only)");
  return AttentionKernel::own;
#else
  if (wanted == AttentionKernel::cudnn)
    throw Error(ExitCode::bad_input, Location{},
                "backend cuda: ZB_CUDA_ATTENTION_KERNEL=cudnn but this build has no cuDNN SDPA",
                "configure with cuDNN 9 and cudnn-frontend found (ZEPPELIN_HAVE_CUDNN), or use "
                "ZB_CUDA_ATTENTION_KERNEL=zb");
  return AttentionKernel::own;
#endif
}

struct RankCompute::Plans {
  struct Attention {
    kc::AttentionSchedule own;
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
    kc::SdpaPlan sdpa;
#endif
    bool backward = false;
  };
  struct Gemm {
#ifdef ZB_CUDA_EXEC_HAVE_GEMM
    kc::GemmPlan plan;
#endif
    bool accumulate = false;
  };
  std::vector<std::unique_ptr<Attention>> attention;  // [instr], null when none or no work
  std::vector<std::unique_ptr<Gemm>> gemm;
  // Scratch offsets in the arena, shared by every instruction (the compute stream runs one at a time).
  std::size_t q = 0, k = 0, v = 0, o = 0, lse = 0, d_o = 0, dq = 0, dk = 0, dv = 0, attention_workspace = 0;
  std::size_t a = 0, b = 0, c = 0, gemm_workspace = 0;
};

RankCompute::RankCompute(const lower::Program& program, int rank, const ModelSpec& model,
                         AttentionKernel kernel, DeviceArena& arena)
    : program_(program), rank_(rank), kernel_(kernel), arena_(arena), plans_(std::make_unique<Plans>()) {
  const auto& list = program.ranks.at(static_cast<std::size_t>(rank)).instrs;
  plans_->attention.resize(list.size());
  plans_->gemm.resize(list.size());
  std::size_t q_bytes = 0, kv_bytes = 0, lse_bytes = 0, workspace = 0, a_bytes = 0, b_bytes = 0, c_bytes = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Instr& in = list[i];
    const std::string where = "backend cuda: " + lower::describe(program, rank, static_cast<int>(i));
    if (in.kind == InstrKind::attention) {
      const PackedBlocks p =
          pack_blocks(program, rank, static_cast<int>(i), {model.heads, model.kv_heads, model.head_dim()});
      if (p.shape.q_tokens == 0 || p.shape.kv_tokens == 0) continue;  // nothing to compute
      const bool backward = in.pass == Pass::bwd;
      if (backward && kernel_ == AttentionKernel::own)
        throw Error(ExitCode::bad_input, Location{},
                    where + ": the project's own attention kernels have no backward pass",
                    "run with cuDNN's SDPA (a build with ZEPPELIN_HAVE_CUDNN, ZB_CUDA_ATTENTION_KERNEL=auto "
                    "or cudnn) "
                    "or a forward-only scenario (\"passes\": \"fwd\")");
      auto plan = std::make_unique<Plans::Attention>();
      plan->backward = backward;
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
      if (kernel_ == AttentionKernel::cudnn) {
        check_status(plan->sdpa.build(p.shape, p.descs, kc::ElementType::bf16, backward), rank, where);
        workspace = std::max(workspace, plan->sdpa.workspace_bytes());
      }
#endif
      if (kernel_ == AttentionKernel::own) check_status(plan->own.build(p.shape, p.descs), rank, where);
      const auto q_width =
          static_cast<std::size_t>(p.shape.heads) * static_cast<std::size_t>(p.shape.head_dim);
      const auto kv_width =
          static_cast<std::size_t>(p.shape.kv_heads) * static_cast<std::size_t>(p.shape.head_dim);
      q_bytes = std::max(q_bytes, static_cast<std::size_t>(p.shape.q_tokens) * q_width * kBf16);
      kv_bytes = std::max(kv_bytes, static_cast<std::size_t>(p.shape.kv_tokens) * kv_width * kBf16);
      lse_bytes = std::max(lse_bytes, static_cast<std::size_t>(p.shape.out_rows) *
                                          static_cast<std::size_t>(p.shape.heads) * 4);
      plans_->attention[i] = std::move(plan);
    } else if (in.kind == InstrKind::gemm) {
      if (in.m <= 0 || in.n <= 0 || in.k <= 0) continue;
#ifdef ZB_CUDA_EXEC_HAVE_GEMM
      auto plan = std::make_unique<Plans::Gemm>();
      plan->accumulate = in.gemm_part == lower::GemmPart::weight_grad;
      check_status(plan->plan.build(in.m, in.n, in.k, kc::ElementType::bf16,
                                    in.gemm_part == lower::GemmPart::weight_grad,
                                    in.gemm_part == lower::GemmPart::data_grad, kGemmWorkspace),
                   rank, where);
      const auto m = static_cast<std::size_t>(in.m), n = static_cast<std::size_t>(in.n),
                 k = static_cast<std::size_t>(in.k);
      a_bytes = std::max(a_bytes, m * k * kBf16);
      b_bytes = std::max(b_bytes, k * n * kBf16);
      c_bytes = std::max(c_bytes, m * n * kBf16);
      plans_->gemm[i] = std::move(plan);
#else
      throw Error(ExitCode::bad_input, Location{},
                  where + ": this build's zb_kernels_cuda has no cuBLASLt GEMM",
                  "build with kernels/cuda/cublaslt_gemm.cpp (kernels/cuda_gemm.hpp)");
#endif
    }
  }
  Plans& s = *plans_;
  s.q = arena.reserve(q_bytes);
  s.k = arena.reserve(kv_bytes);
  s.v = arena.reserve(kv_bytes);
  s.o = arena.reserve(q_bytes);
  s.lse = arena.reserve(lse_bytes);
  s.d_o = arena.reserve(q_bytes);
  s.dq = arena.reserve(q_bytes);
  s.dk = arena.reserve(kv_bytes);
  s.dv = arena.reserve(kv_bytes);
  s.attention_workspace = arena.reserve(workspace);
  s.a = arena.reserve(a_bytes);
  s.b = arena.reserve(b_bytes);
  s.c = arena.reserve(c_bytes);
  s.gemm_workspace = arena.reserve(c_bytes > 0 ? kGemmWorkspace : 0);
}

RankCompute::~RankCompute() = default;

void RankCompute::launch(int id, cudaStream_t stream) const {
  const Plans& s = *plans_;
  const auto i = static_cast<std::size_t>(id);
  auto at = [&](std::size_t offset) { return arena_.at(offset); };
  if (const auto& plan = s.attention.at(i)) {
    const std::string where = "backend cuda: " + lower::describe(program_, rank_, id);
#ifdef ZB_CUDA_EXEC_HAVE_SDPA
    if (kernel_ == AttentionKernel::cudnn) {
      if (plan->backward) {
        const kc::SdpaBackwardTensors t{at(s.q),   at(s.k),
                                        at(s.v),   at(s.o),
                                        at(s.d_o), static_cast<const float*>(at(s.lse)),
                                        at(s.dq),  at(s.dk),
                                        at(s.dv),  at(s.attention_workspace)};
        check_status(kc::sdpa_backward(plan->sdpa, t, stream), rank_, where);
      } else {
        const kc::SdpaForwardTensors t{
            at(s.q), at(s.k), at(s.v), at(s.o), static_cast<float*>(at(s.lse)), at(s.attention_workspace)};
        check_status(kc::sdpa_forward(plan->sdpa, t, stream), rank_, where);
      }
      return;
    }
#endif
    const kc::AttentionTensors t{
        kc::ElementType::bf16,         at(s.q), at(s.k), at(s.v), kc::ElementType::bf16, at(s.o),
        static_cast<float*>(at(s.lse))};
    check_status(kc::attention_forward(plan->own, t, stream), rank_, where);
    return;
  }
#ifdef ZB_CUDA_EXEC_HAVE_GEMM
  if (const auto& plan = s.gemm.at(i)) {
    check_status(
        kc::gemm(plan->plan, at(s.a), at(s.b), at(s.c), at(s.gemm_workspace), plan->accumulate, stream),
        rank_, "backend cuda: " + lower::describe(program_, rank_, id));
  }
#endif
}

}  // namespace zb::cuda
