#include "core/exec/cuda/verify_layout.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/common/error.hpp"
#include "core/exec/block_packing.hpp"

namespace zb::cuda {

using lower::Instr;
using lower::InstrKind;
using lower::Message;
using lower::Tensor;

namespace {

constexpr std::int64_t kBf16 = 2;

bool same_slices(const Message& a, const Message& b) {
  if (a.slices.size() != b.slices.size()) return false;
  for (std::size_t i = 0; i < a.slices.size(); ++i) {
    const lower::Slice &x = a.slices[i], &y = b.slices[i];
    if (x.tensor != y.tensor || x.seq != y.seq || x.begin != y.begin || x.end != y.end) return false;
  }
  return true;
}

bool is_remap_exchange(const lower::Program& program, const Message& m) {
  return m.collective >= 0 && program.collectives[static_cast<std::size_t>(m.collective)].kind ==
                                  lower::CollectiveKind::all_to_all_v;
}

// Each source message's payload and its slices by (tensor, sequence), built once per message: a message
// of a packed batch carries thousands of slices and an instruction thousands of blocks.
class SliceIndex {
 public:
  SliceIndex(const lower::Program& program, const AttentionDims& dims)
      : program_(program), dims_(dims), entries_(program.messages.size()) {}

  struct Hit {
    const lower::Slice* slice;
    std::int64_t offset;  // of the slice in the payload
  };
  // The slice of message `id` with `tensor` rows of `seq` that holds `token`, if any.
  std::optional<Hit> find(int id, Tensor tensor, int seq, std::int64_t token) {
    Entry& e = entry(id);
    const auto it = e.by_rows.find({static_cast<int>(tensor), seq});
    if (it == e.by_rows.end()) return std::nullopt;
    const lower::Message& m = program_.messages[static_cast<std::size_t>(id)];
    for (const std::size_t i : it->second)
      if (m.slices[i].begin <= token && token < m.slices[i].end)
        return Hit{&m.slices[i], e.payload.slice_offset[i]};
    return std::nullopt;
  }

 private:
  struct Entry {
    bool built = false;
    Payload payload;
    std::map<std::pair<int, int>, std::vector<std::size_t>> by_rows;
  };
  Entry& entry(int id) {
    Entry& e = entries_[static_cast<std::size_t>(id)];
    if (e.built) return e;
    const lower::Message& m = program_.messages[static_cast<std::size_t>(id)];
    e.payload = payload_of(m, dims_);
    for (std::size_t i = 0; i < m.slices.size(); ++i)
      e.by_rows[{static_cast<int>(m.slices[i].tensor), m.slices[i].seq}].push_back(i);
    e.built = true;
    return e;
  }

  const lower::Program& program_;
  AttentionDims dims_;
  std::vector<Entry> entries_;
};

// Where rows of one tensor can come from for one attention instruction, in the order they are tried.
struct Sources {
  std::vector<layout::Shard> own;  // the rank's linear layout
  std::vector<int> messages;       // remaps into this rank, then the instruction's reads
};

// The longest run of `tensor` rows from `token` on (up to `end`) that one source holds, first source first.
std::optional<OperandRun> find_run(SliceIndex& index, const AttentionDims& dims, const Sources& sources,
                                   Tensor tensor, int seq, std::int64_t token, std::int64_t end) {
  for (const layout::Shard& s : sources.own) {
    if (s.seq == seq && s.begin <= token && token < s.end)
      return OperandRun{-1, seq, token, std::min(end, s.end) - token, 0, 0};
  }
  for (const int id : sources.messages) {
    if (const auto hit = index.find(id, tensor, seq, token)) {
      const std::int64_t byte =
          hit->offset + (token - hit->slice->begin) * row_elements(dims, tensor) * kBf16;
      return OperandRun{id, seq, token, std::min(end, hit->slice->end) - token, 0, byte};
    }
  }
  return std::nullopt;
}

}  // namespace

PackedBlocks pack_blocks(const lower::Program& program, int rank, int id, const AttentionDims& model) {
  const Instr& in = program.instr(rank, id);
  if (in.kind != InstrKind::attention)
    throw Error(
        ExitCode::runtime, Location{},
        "backend cuda: " + lower::describe(program, rank, id) + ": it is not an attention instruction");
  PackedBlocks p;
  p.blocks = lower::attention_blocks(program, rank, in);
  int heads = 0;
  for (const auto& b : p.blocks) {
    heads = std::max(heads, b.heads.count(model.heads));
    p.all_heads = p.all_heads && b.heads.count(model.heads) == model.heads;
  }
  p.shape.heads = std::max(1, heads);
  p.shape.kv_heads = std::max(1, p.shape.heads * model.kv_heads / std::max(1, model.heads));
  p.shape.head_dim = model.head_dim;
  p.descs = pack_block_descs(p.blocks, p.shape);
  return p;
}

std::int64_t row_elements(const AttentionDims& dims, Tensor tensor) {
  switch (tensor) {
    case Tensor::Q:
    case Tensor::O:
    case Tensor::dQ:
    case Tensor::dO:
      return static_cast<std::int64_t>(dims.q_width());
    case Tensor::K:
    case Tensor::V:
    case Tensor::dK:
    case Tensor::dV:
      return static_cast<std::int64_t>(dims.kv_width());
    case Tensor::hidden:
    case Tensor::grad:
      return 0;
  }
  return 0;
}

Payload payload_of(const Message& message, const AttentionDims& dims) {
  Payload p;
  p.rows = !message.slices.empty();
  for (const lower::Slice& s : message.slices) {
    p.slice_offset.push_back(p.bytes);
    const std::int64_t width = row_elements(dims, s.tensor);
    p.rows = p.rows && width > 0;
    p.bytes += s.rows() * width * kBf16;
  }
  if (!p.rows) p.bytes = message.bytes;
  return p;
}

std::string verification_blocker(const lower::Program& program, const AttentionDims& dims) {
  // A head all-to-all trades sequence shards for head slices (Ulysses, USP, zeppelin's heads: auto); the
  // pass replays K/V rows, not head slices of them, so such a Program is not checked here (the reference
  // backend checks them on real numbers).
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    if (program.collectives[c].kind == lower::CollectiveKind::all_to_all)
      return "a head all-to-all (collective " + std::to_string(c) + ") moves head slices";
  }
  for (int r = 0; r < program.world_size; ++r) {
    const auto& list = program.ranks[static_cast<std::size_t>(r)].instrs;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].kind != InstrKind::attention) continue;
      if (!pack_blocks(program, r, static_cast<int>(i), dims).all_heads)
        return "attention over a subset of the heads (tensor or head parallelism), " +
               lower::describe(program, r, static_cast<int>(i));
      for (const int m : list[i].reads) {
        const Message& msg = program.messages[static_cast<std::size_t>(m)];
        if (msg.collective >= 0 && !is_remap_exchange(program, msg))
          return "K/V arrive inside an NCCL collective (" +
                 std::string(
                     lower::to_string(program.collectives[static_cast<std::size_t>(msg.collective)].kind)) +
                 "), " + lower::describe(program, r, static_cast<int>(i));
      }
    }
  }
  return {};
}

double oracle_work(const lower::Program& program, const AttentionDims& dims) {
  double busiest = 0;
  const double width = static_cast<double>(dims.heads) * dims.head_dim;
  for (int r = 0; r < program.world_size; ++r) {
    double work = 0;
    const auto& list = program.ranks[static_cast<std::size_t>(r)].instrs;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].kind != InstrKind::attention) continue;
      for (const layout::AttentionBlock& b : pack_blocks(program, r, static_cast<int>(i), dims).blocks) {
        const auto q = static_cast<double>(b.q1 - b.q0), kv = static_cast<double>(b.k1 - b.k0);
        // forward: Q·Kᵀ and P·V; backward: the rows' full-prefix forward, then five products per pair
        work += list[i].pass == Pass::fwd ? 2 * q * kv * width
                                          : (2 * q * static_cast<double>(b.q1) + 5 * q * kv) * width;
      }
    }
    busiest = std::max(busiest, work);
  }
  return busiest;
}

VerifyLayout derive_verify_layout(const lower::Program& program, int rank, const AttentionDims& dims) {
  VerifyLayout layout;
  layout.forwards.assign(program.messages.size(), -1);
  const auto& list = program.ranks.at(static_cast<std::size_t>(rank)).instrs;
  std::vector<bool> received(program.messages.size(), false), generated(program.messages.size(), false);
  std::vector<int> remaps_in;
  for (std::size_t m = 0; m < program.messages.size(); ++m) {
    const Message& msg = program.messages[m];
    if (!is_remap_exchange(program, msg)) continue;
    if (msg.src == rank) generated[m] = true;
    if (msg.dst == rank) received[m] = true;
    if (msg.dst == rank && msg.pass == Pass::fwd) remaps_in.push_back(static_cast<int>(m));
  }
  for (const Instr& in : list)
    if (in.kind == InstrKind::recv) received[static_cast<std::size_t>(in.message)] = true;
  for (const Instr& in : list) {
    if (in.kind != InstrKind::send) continue;
    const auto m = static_cast<std::size_t>(in.message);
    if (received[m]) layout.forwards[m] = in.message;
    for (const int r : in.reads) {
      if (layout.forwards[m] < 0 && received[static_cast<std::size_t>(r)] &&
          same_slices(program.messages[m], program.messages[static_cast<std::size_t>(r)]))
        layout.forwards[m] = r;
    }
    if (layout.forwards[m] < 0) generated[m] = true;
  }
  for (std::size_t m = 0; m < generated.size(); ++m)
    if (generated[m]) layout.generated.push_back(static_cast<int>(m));

  SliceIndex index(program, dims);
  Sources sources;
  for (const layout::Shard& s : program.linear_layout.at(static_cast<std::size_t>(rank)))
    if (s.size() > 0) sources.own.push_back(s);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Instr& in = list[i];
    if (in.kind != InstrKind::attention) continue;
    AttentionOperands a;
    a.instr = static_cast<int>(i);
    a.backward = in.pass == Pass::bwd;
    a.packed = pack_blocks(program, rank, a.instr, dims);
    if (a.packed.shape.q_tokens == 0 || a.packed.shape.kv_tokens == 0) continue;  // nothing to compute
    sources.messages = remaps_in;
    sources.messages.insert(sources.messages.end(), in.reads.begin(), in.reads.end());
    for (std::size_t b = 0; b < a.packed.blocks.size(); ++b) {
      const layout::AttentionBlock& block = a.packed.blocks[b];
      for (const auto& [tensor, runs] : {std::pair{Tensor::K, &a.k}, std::pair{Tensor::V, &a.v}}) {
        for (std::int64_t t = block.k0; t < block.k1;) {
          std::optional<OperandRun> run = find_run(index, dims, sources, tensor, block.seq, t, block.k1);
          if (!run) {
            if (layout.problem.empty())
              layout.problem = lower::describe(program, rank, a.instr) + ": the " + lower::to_string(tensor) +
                               " row of sequence " + std::to_string(block.seq) + " token " +
                               std::to_string(t) +
                               " is neither this rank's own nor in a message it receives and reads";
            break;
          }
          run->packed_row = a.packed.descs[b].kv_row + (t - block.k0);
          t += run->rows;
          runs->push_back(*run);
        }
      }
    }
    layout.attention.push_back(std::move(a));
  }
  return layout;
}

}  // namespace zb::cuda
