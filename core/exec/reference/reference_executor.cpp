#include "core/exec/reference/reference_executor.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <tuple>

#include "core/exec/launch/launcher.hpp"
#include "core/exec/reference/gradient_reference.hpp"
#include "core/exec/reference/in_process_transport.hpp"
#include "core/exec/reference/launcher.hpp"
#include "core/exec/reference/nic_expectation.hpp"
#include "core/exec/reference/rank_location.hpp"
#ifdef ZEPPELIN_HAVE_MPI
#include "core/exec/reference/mpi_run.hpp"
#endif

namespace zb::reference {
namespace {

struct RankFailure {
  std::optional<Error> error;  // the rank's own failure
  bool secondary = false;      // it stopped because another rank failed
  std::optional<RankStalled> stall;
};

// A stuck plan stalls every rank. The waits that explain it come first: a rank waiting for a rank that
// already finished its own ops (that rank will never send what is awaited); then every other wait.
std::vector<Problem> explain_stalls(const std::vector<RankFailure>& failures) {
  std::vector<bool> finished(failures.size(), false);
  for (std::size_t r = 0; r < failures.size(); ++r)
    finished[r] = !failures[r].error || (failures[r].stall && failures[r].stall->finished_own_ops());
  std::vector<Problem> causes, others;
  for (const RankFailure& f : failures) {
    if (!f.stall) continue;
    const bool cause = !f.stall->finished_own_ops() &&
                       std::any_of(f.stall->awaited().begin(), f.stall->awaited().end(),
                                   [&](int peer) { return finished.at(static_cast<std::size_t>(peer)); });
    auto& into = cause ? causes : others;
    into.insert(into.end(), f.stall->problems().begin(), f.stall->problems().end());
  }
  causes.insert(causes.end(), others.begin(), others.end());
  return causes;
}

Bytes as_bytes(const std::string& text) {
  Bytes payload(text.size());
  std::memcpy(payload.data(), text.data(), text.size());
  return payload;
}

std::vector<RankResult> run_in_process(const RunInputs& inputs, int ranks) {
  InProcessFabric fabric(ranks);
  std::vector<RankResult> results(static_cast<std::size_t>(ranks));
  std::vector<RankFailure> failures(static_cast<std::size_t>(ranks));
  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        InProcessTransport transport(fabric, r);
        RankFailure& failure = failures[static_cast<std::size_t>(r)];
        try {
          results[static_cast<std::size_t>(r)] = RankRunner(inputs, r, transport).run();
          return;
        } catch (const PeerFailed& e) {
          failure = {e, true, std::nullopt};
          return;
        } catch (const RankStalled& e) {
          // The others stall on their own (see explain_stalls); only the executor's waits after the
          // last barrier, which would wait for this rank's records for hours, stop on the notice.
          failure = {e, false, e};
          for (int other = 0; other < ranks; ++other)
            if (other != r)
              transport.send(other, Tag::make(MessageKind::stalled, 0), as_bytes(e.problems().front().str()));
          return;
        } catch (const Error& e) {
          failure = {e, false, std::nullopt};
        } catch (const std::exception& e) {
          failure = {Error(ExitCode::runtime, rank_location(r), e.what()), false, std::nullopt};
        }
        // Tell the others, so they stop now instead of waiting for the receive timeout.
        const Bytes payload = as_bytes(failure.error->problems().front().str());
        for (int other = 0; other < ranks; ++other)
          if (other != r) transport.send(other, Tag::make(MessageKind::abort, 0), payload);
      });
    }
  }  // jthreads join here
  std::vector<Problem> root_causes, secondary;
  for (const RankFailure& f : failures) {
    if (!f.error || f.stall) continue;
    auto& into = f.secondary ? secondary : root_causes;
    into.insert(into.end(), f.error->problems().begin(), f.error->problems().end());
  }
  if (!root_causes.empty()) throw Error(ExitCode::runtime, std::move(root_causes));
  if (std::vector<Problem> stalls = explain_stalls(failures); !stalls.empty())
    throw Error(ExitCode::runtime, std::move(stalls));
  if (!secondary.empty()) throw Error(ExitCode::runtime, std::move(secondary));
  return results;
}

// Head-parallel plans (Ulysses, USP) name heads in the model's units; the reference computes its own
// heads, so each range must fall on whole reference heads (and, with GQA, read its K/V heads in the
// kernel's packed order). Checked up front: a scenario whose reference dims cannot carry the plan's
// slices is bad input (exit 2), not a numerical failure. Under tensor parallelism the reference runs
// every head on every TP rank (head ranges ignored), which cannot hold a head all-to-all's slices.
HeadMap check_head_slices(const lower::Program& program, const ReferenceOptions& options,
                          const ModelSpec& model) {
  const bool tensor_parallel = !program.tensor_parallel_groups.empty();
  const HeadMap heads(model.heads, {options.heads, options.kv_heads, options.head_dim}, !tensor_parallel);
  const std::string system = "system '" + program.system + "' (" + program.strategy + ")";
  const std::string hint =
      "set ZB_REF_HEADS (and ZB_REF_KV_HEADS) so that the reference's heads split as the plan's "
      "slices do, e.g. to the model's " +
      std::to_string(model.heads) + " (" + std::to_string(model.kv_heads) + ")";
  for (const lower::Collective& c : program.collectives) {
    if (c.kind != lower::CollectiveKind::all_to_all || c.messages.empty()) continue;
    if (tensor_parallel) {
      throw Error(
          ExitCode::bad_input, Location{},
          system +
              ": the reference backend does not run head all-to-alls under tensor parallelism (it computes "
              "every head on every tensor-parallel rank)",
          "run this system on the sim backend, or without \"parallelism\": {\"tensor\": …}");
    }
    for (const int m : c.messages) {
      for (const lower::Slice& s : program.messages[static_cast<std::size_t>(m)].slices) {
        if (heads.columns(s.heads)) continue;
        throw Error(ExitCode::bad_input, Location{},
                    system + ": its head all-to-all moves " + heads.describe(s.heads) +
                        ", which are no whole heads of the "
                        "reference's " +
                        std::to_string(options.heads) + " (" + std::to_string(options.kv_heads) + " K/V)",
                    hint);
      }
    }
  }
  if (!heads.applies()) return heads;
  for (const lower::RankProgram& rank : program.ranks) {
    for (int i = 0; i < rank.first_backward; ++i) {
      const lower::Instr& in = rank.instrs[static_cast<std::size_t>(i)];
      if (in.kind != lower::InstrKind::attention) continue;
      std::vector<layout::HeadRange> ranges{in.heads};
      for (const layout::AttentionBlock& b : lower::attention_blocks(program, rank.rank, in))
        ranges.push_back(b.heads);
      for (const layout::HeadRange& r : ranges) {
        if (heads.columns(r)) continue;
        throw Error(ExitCode::bad_input, Location{},
                    system + ": " + lower::describe(program, rank.rank, i) + " computes " +
                        heads.describe(r) + ", which are no whole heads of the reference's " +
                        std::to_string(options.heads) + " (" + std::to_string(options.kv_heads) + " K/V)",
                    hint);
      }
    }
  }
  return heads;
}

std::string format_error(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

struct Verdict {
  std::string note;  // "forward verified: …; backward verified: …"
};

// The verdict over every rank: a failed check throws (exit 3) with one problem per failing rank, the
// forward's first; otherwise the note states forward and backward verified separately, with the worst
// error of each tensor.
Verdict summarise(const std::vector<RankResult>& results, const std::string& system, double tolerance,
                  bool tensor_parallel) {
  double max_error = 0;
  std::int64_t rows = 0;
  TensorCheck dq, dk, dv;
  bool backward = false;
  std::vector<Problem> forward_failures, backward_failures;
  for (const RankResult& r : results) {
    max_error = std::max(max_error, r.verification.max_rel_error);
    rows += r.verification.rows_checked;
    if (!r.verification.failure.empty())
      forward_failures.push_back({rank_location(r.rank), r.verification.failure, ""});
    if (!r.gradients.ran) continue;
    backward = true;
    dq.merge(r.gradients.dq);
    dk.merge(r.gradients.dk);
    dv.merge(r.gradients.dv);
    if (!r.gradients.failure.empty())
      backward_failures.push_back({rank_location(r.rank), r.gradients.failure, ""});
  }
  if (!forward_failures.empty()) {
    forward_failures.front().hint = "the plan of " + system +
                                    " computes wrong attention outputs (tolerance " +
                                    format_error(tolerance) + ")";
    throw Error(ExitCode::runtime, std::move(forward_failures));
  }
  if (!backward_failures.empty()) {
    backward_failures.front().hint =
        "the plan of " + system +
        " computes wrong attention gradients; each element is held to its derived float32 "
        "rounding bound, docs/REFERENCE.md";
    throw Error(ExitCode::runtime, std::move(backward_failures));
  }
  Verdict v;
  v.note = "forward verified: max rel error " + format_error(max_error) + " over " + std::to_string(rows) +
           " output rows (token, head) (tolerance " + format_error(tolerance) + ")";
  if (backward) {
    const double ratio = std::max({dq.worst_ratio, dk.worst_ratio, dv.worst_ratio});
    v.note += "; backward verified: normwise rel error dQ " + format_error(dq.normwise()) + ", dK " +
              format_error(dk.normwise()) + ", dV " + format_error(dv.normwise()) + " over " +
              std::to_string(dq.rows) +
              " token rows (every element within its derived rounding bound, worst error/bound " +
              format_error(ratio) + ")";
  }
  // Every member of a tensor-parallel group holds and checks its group's rows, so the counts are per member.
  if (tensor_parallel) v.note += " (rows counted on every member of their tensor-parallel group)";
  return v;
}

}  // namespace

void check_batch_size(const std::vector<layout::Sequence>& sequences, const std::string& scenario,
                      const ReferenceOptions& options) {
  std::int64_t tokens = 0;
  double sum_squares = 0;
  for (const layout::Sequence& s : sequences) {
    tokens += s.length;
    sum_squares += static_cast<double>(s.length) * static_cast<double>(s.length);
  }
  const std::string intro =
      "the reference backend checks numerics on small batches: scenario '" + scenario + "' has ";
  Location where;
  where.json_path = "workload.tokens_per_iteration";
  if (tokens > options.max_tokens) {
    throw Error(ExitCode::bad_input, where,
                intro + std::to_string(tokens) + " tokens per iteration, above its limit of " +
                    std::to_string(options.max_tokens),
                "use --backend sim, or reduce workload.tokens_per_iteration");
  }
  if (sum_squares > options.max_sum_squares) {
    char figures[96];
    std::snprintf(figures, sizeof figures, "%.3g, above its limit of %.3g", sum_squares,
                  options.max_sum_squares);
    where.json_path = "workload.max_seq_len";
    throw Error(ExitCode::bad_input, where,
                intro + "sequences whose sum of squared lengths is " + figures +
                    " (the float64 check costs length² per sequence)",
                "use --backend sim, or reduce workload.max_seq_len or workload.tokens_per_iteration");
  }
}

TransportChoice resolve_transport(TransportChoice wanted, [[maybe_unused]] int plan_world_size) {
  const Launch launch = process_launch();
  const int launched = launch.multi_process() ? launch.world_size : 0;
  TransportChoice choice = wanted;
  if (choice == TransportChoice::automatic)
    choice = launched > 0 && mpi_built() ? TransportChoice::mpi : TransportChoice::in_process;
  if (choice == TransportChoice::mpi && !mpi_built()) {
    throw Error(ExitCode::bad_input, Location{},
                "the reference backend was asked for MPI but this build has no MPI",
                "install MPI (libopenmpi-dev) and reconfigure, or run without mpirun");
  }
  if (choice == TransportChoice::in_process && launched > 1) {
    throw Error(
        ExitCode::bad_input, Location{},
        "this process is one of " + std::to_string(launched) +
            " started by an MPI launcher, but the reference backend would run every rank in each of them (" +
            (mpi_built() ? "ZB_REF_TRANSPORT asks for threads" : "this build has no MPI") + ")",
        "run zeppelin-bench without mpirun, or use a build with MPI");
  }
  if (choice == TransportChoice::mpi) {
#ifdef ZEPPELIN_HAVE_MPI
    const int world = mpi_world_size();
    if (launched > 1 && world == 1) {
      throw Error(ExitCode::bad_input, Location{},
                  "the launcher started " + std::to_string(launched) +
                      " processes but MPI sees a world of 1: this binary's MPI is not the launcher's",
                  "use the mpirun of the MPI this build was linked against");
    }
    if (world != plan_world_size) {
      throw Error(ExitCode::bad_input, Location{},
                  "the MPI world has " + std::to_string(world) + " processes but the scenario has " +
                      std::to_string(plan_world_size) + " GPUs",
                  "run mpirun -np " + std::to_string(plan_world_size));
    }
#endif
  }
  return choice;
}

ReferenceExecutor::ReferenceExecutor(ReferenceOptions options) : options_(std::move(options)) {}
ReferenceExecutor::~ReferenceExecutor() = default;

Trace ReferenceExecutor::run(const lower::Program& program, const ExecContext& context) {
  const ReferenceOptions options = options_.resolved_for(context.cost.model());
  options.validate();
  const HeadMap heads = check_head_slices(program, options, context.cost.model());
  check_batch_size(program.sequences, context.scenario_name, options);  // before any row is generated
  const ClusterSpec& cluster = context.cluster();
  if (program.world_size != cluster.world_size() ||
      program.ranks.size() != static_cast<std::size_t>(program.world_size)) {
    throw Error(ExitCode::runtime, Location{},
                "the program has " + std::to_string(program.ranks.size()) + " rank programs for a world of " +
                    std::to_string(program.world_size) + ", but the cluster has " +
                    std::to_string(cluster.world_size()) + " GPUs");
  }
  Trace trace;
  trace.backend = "reference";
  trace.world_size = program.world_size;
  trace.gpus_per_node = program.gpus_per_node;
  trace.nics_per_node = cluster.nics_per_node;
  trace.layers = context.cost.model().layers;
  trace.backward = false;  // set once the backward pass has run and verified
  std::int64_t largest_gemm_dim = 0;
  for (const lower::RankProgram& rank : program.ranks)
    for (const lower::Instr& in : rank.instrs)
      if (in.kind == lower::InstrKind::gemm)
        largest_gemm_dim = std::max({largest_gemm_dim, in.m, in.n, in.k});
  trace.stand_in = options.stand_in_for(context.cost.model(), largest_gemm_dim);
  const TransportChoice transport = resolve_transport(options.transport, program.world_size);
  if (options.samples_nics() && transport != TransportChoice::mpi) {
    throw Error(
        ExitCode::bad_input, Location{},
        "ZB_NICS asks for measured NIC loads, but this run has every rank in one process (threads): no byte "
        "of it crosses a NIC",
        "run it under mpirun over the nodes (scripts/emulated-cluster.sh run on this machine), or unset "
        "ZB_NICS");
  }
  RunInputs inputs{
      program,      options, QkvGenerator(context.seed, {options.heads, options.kv_heads, options.head_dim}),
      Clock::now(), nullptr, true};
  std::optional<GradientReference> gradients;  // shared by the rank threads; one per process under MPI
  if (program.backward) inputs.gradients = &gradients.emplace(program, inputs.generator);
  inputs.one_process = transport != TransportChoice::mpi;
  inputs.nic_bandwidth = cluster.nic.bandwidth;
  inputs.heads = heads;
#ifdef ZEPPELIN_HAVE_MPI
  if (transport == TransportChoice::mpi && !mpi_transport_) mpi_transport_ = make_mpi_transport();
  last_results_ = transport == TransportChoice::mpi ? run_mpi_rank(*mpi_transport_, inputs)
                                                    : run_in_process(inputs, program.world_size);
#else
  last_results_ = run_in_process(inputs, program.world_size);
#endif

  const Verdict verdict =
      summarise(last_results_, program.system, options.tolerance, !program.tensor_parallel_groups.empty());
  for (RankResult& r : last_results_) {
    trace.events.insert(trace.events.end(), r.events.begin(), r.events.end());
    trace.links.insert(trace.links.end(), r.nic_loads.begin(), r.nic_loads.end());
  }
  if (!trace.links.empty())
    set_expected_nic_bytes(trace.links, program, {options.heads, options.kv_heads, options.head_dim}, cluster,
                           options.nic_pairing);
  sort_trace_events(trace.events);
  // The layer barrier: every backward event starts after the last forward one ended (the ranks said so
  // to each other), so the backward layer is the time from there to its last event.
  for (const TraceEvent& e : trace.events)
    if (e.pass == Pass::fwd) trace.layer.forward = std::max(trace.layer.forward, e.end);
  double backward_end = trace.layer.forward;
  for (const TraceEvent& e : trace.events)
    if (e.pass == Pass::bwd) backward_end = std::max(backward_end, e.end);
  trace.backward = program.backward;
  trace.layer.backward = program.backward ? backward_end - trace.layer.forward : 0;
  trace.iteration_seconds = trace.layers * (trace.layer.forward + trace.layer.backward);
  trace.model_note =
      verdict.note + " of " + std::to_string(program.world_size) + " ranks; CPU reference, " +
      (transport == TransportChoice::mpi ? "MPI" : "threads") + ", heads " + std::to_string(options.heads) +
      ", kv_heads " + std::to_string(options.kv_heads) + ", head_dim " + std::to_string(options.head_dim) +
      (program.backward ? ", one layer forward and backward" : ", one layer forward") + ", wall-clock" +
      (trace.links.empty() ? "" : "; NIC bytes measured from the hosts' counters");
  return trace;
}

}  // namespace zb::reference
