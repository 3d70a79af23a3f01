#pragma once
// The shared engine of the fixed-degree baselines (ring-cp, uniform-cp): fixed CP groups of consecutive
// ranks, documents dealt to the groups (balanced by estimated cost, or FFD packs round-robin), each group
// running its packs one after another as micro-batches, every document zigzag-sharded over its group
// (TransformerEngine THD semantics), ring P2P attention with direct routes (static GPU→NIC affinity), no
// remap.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/config/system_catalog.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/strategies/packing.hpp"

namespace zb {

class PlanBuilder;

// How documents reach the D = N/C data-parallel groups.
//   balanced     longest-processing-time on the cost model: each document, costliest first, goes to the
//                group with the least estimated work so far; each group then FFD-packs its own documents
//                into packs of its memory (Megatron-style balancing of packs across data-parallel ranks);
//   round_robin  FFD packs of the whole batch dealt pack i → group i mod D (a cost-oblivious sampler).
enum class Dealing { balanced, round_robin };

struct PackedCpSetup {
  std::string system;
  std::string strategy;
  int degree = 1;  // ranks per group; must divide the world size
  Passes passes = Passes::fwd_bwd;
  Dealing dealing = Dealing::balanced;
};

// The options both fixed-degree baselines share: "degree" (what "auto" means differs, hence
// `description`; `keywords` are further string values, e.g. "per-batch"), "dealing" (balanced |
// round-robin), and the check that a fixed degree divides the world into whole groups (the option type
// cannot say that).
[[nodiscard]] SystemOption degree_system_option(std::string description,
                                                std::vector<std::string> keywords = {});
[[nodiscard]] SystemOption dealing_system_option();
// Reads the shared options into `setup`: a fixed degree (an "auto" degree leaves setup.degree as the
// strategy set it) and the dealing.
void read_packed_cp_options(const SystemSpec& system, PackedCpSetup& setup);
[[nodiscard]] std::vector<OptionProblem> check_cp_degree(const nlohmann::json& options,
                                                         const SystemCheckContext& context);

// How a fixed-degree baseline's degree option resolves (docs/STRATEGIES.md, "Degree at launch"):
//   fixed      an integer, as given;
//   launch     "auto": fixed once for the run from the context length (max_seq_len) and memory, as a
//              launch script sizes CP_SIZE, so every iteration runs the same degree;
//   per_batch  "per-batch": re-chosen from each batch (an idealised form no training job runs).
enum class DegreeChoice { fixed, launch, per_batch };
[[nodiscard]] DegreeChoice read_degree_choice(const nlohmann::json& value);
// The report's name for a choice: "fixed", "auto" or "per-batch" (the option's own spelling).
[[nodiscard]] const char* degree_choice_name(DegreeChoice choice);
// The degree a launch script picks: the smallest power of two dividing `world` whose group `holds` the
// longest document the run can see; when no power of two does, the smallest divisor that does; when none
// does, `world` (whose plans are then OOMs naming the document).
[[nodiscard]] int smallest_holding_degree(int world, const std::function<bool(int)>& holds);

// One rank's share of a document's attention in a zigzag ring of `ring` GPUs (1: the GPU holds it whole):
// the forward (and, with a backward pass, backward) kernel time at its query chunks' length without the
// per-call overhead, which a varlen call pays once for all its sequences. The term every compute floor sums.
[[nodiscard]] double zigzag_attention_floor(const CostModel& cost, std::int64_t length, int ring,
                                            Passes passes);

// One rank's share of a whole document in a zigzag ring of `ring` GPUs, per layer: its attention share
// (zigzag_attention_floor) plus its GEMMs over length/ring rows, forward and, with a backward pass,
// backward. Any rank holding that share does at least this, so the costliest document bounds a plan.
[[nodiscard]] double document_share_floor(const CostModel& cost, std::int64_t length, int ring,
                                          Passes passes);

// The compute the busiest group's ranks do in one iteration of the balanced packed-CP plan at `degree`
// (each rank its zigzag share of every document's attention at its chunk length, without call
// overheads, and one GEMM pass over its tokens): a floor under that plan's estimate, which also waits
// for transfers and runs the GEMMs per pack, computed in O(documents · log groups) without building it.
[[nodiscard]] double packed_cp_compute_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                             int degree, Passes passes);
// A weaker bound under packed_cp_compute_floor in O(documents), with no dealing: the group that holds a
// document does at least that document's share, so the costliest single document bounds the busiest
// group. Lets a caller rule a degree out before paying for the LPT dealing.
[[nodiscard]] double packed_cp_document_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                              int degree, Passes passes);
// The other O(documents) bound under packed_cp_compute_floor: the busiest group does at least the average
// group's compute. A GEMM's time is affine in its rows (and zero without rows), so the GEMMs of the
// min(groups, documents) groups that get documents sum to that many passes over their mean token count.
// Unlike the document floor it grows with the batch: a batch of many short documents is ruled out here.
[[nodiscard]] double packed_cp_average_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                             int degree, Passes passes);

// Whether every document fits a pack at `degree` (pad(s, 2C) ≤ C·M): otherwise plan_packed_cp's plan is an
// OOM.
[[nodiscard]] bool packed_cp_fits(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                  int degree);

// A floor under the whole predicted iteration of the packed-CP plan at `degree` dealt as `dealing`, for
// skipping a degree that cannot win without building its plan (0 when it would be an OOM). The
// larger of two floors under its layers: the compute floor above (balanced dealing only, the plan it
// bounds) and the forward K/V relay of its slowest inter-node ring hop (a ring's sends on one rank run
// one after another, each taking at least its bytes at the NIC's line rate), times the layers;
// plus what the plan's tokens per rank cost outside the layers (the busiest rank's embedding and LM
// head, the optimizer step; the exposed gradient synchronisation, never negative, left out). The packs,
// shards and hop bytes are the plan's own, in O(documents · degree + packs · degree²).
[[nodiscard]] double packed_cp_prediction_floor(const CostModel& cost,
                                                const std::vector<std::int64_t>& lengths, int degree,
                                                Passes passes, Dealing dealing);

// The packs each of `groups` data-parallel groups runs, one after another (documents as batch indices),
// dealt as `dealing` says into packs of `capacity` tokens after padding each document to `align`.
// Every document must fit a pack (the caller reports the ones that do not as an OOM first).
[[nodiscard]] std::vector<std::vector<Pack>> deal_packs(const CostModel& cost,
                                                        const std::vector<std::int64_t>& lengths, int groups,
                                                        std::int64_t align, std::int64_t capacity,
                                                        Dealing dealing);

// The micro-batch count of dealt packs (the most packs of one group) and their number.
[[nodiscard]] std::pair<int, std::size_t> micro_batches_and_packs(
    const std::vector<std::vector<Pack>>& dealt);
// The facts a packed-CP plan states (info: degree, groups, dealing, packs, pack_capacity_tokens) and
// its micro-batch count.
void add_packed_cp_facts(PlanBuilder& b, const PackedCpSetup& setup,
                         const std::vector<std::vector<Pack>>& dealt, std::int64_t capacity);

[[nodiscard]] plan::Plan plan_packed_cp(const PackedCpSetup& setup, const CostModel& cost,
                                        const std::vector<std::int64_t>& lengths);

}  // namespace zb
