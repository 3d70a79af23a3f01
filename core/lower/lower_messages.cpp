// What each transfer carries and how its bytes travel: plan sends paired with their recvs, messages cut
// into pieces along their route, the legs of each piece (first leg on the source, relay legs on the
// proxies, last leg on the destination), and the match of every send leg with its recv leg.
#include <algorithm>
#include <unordered_map>

#include "core/common/error.hpp"
#include "core/lower/lowerer.hpp"

namespace zb::lower::detail {

using plan::Op;
using plan::OpKind;

Lowerer::Lowerer(const plan::Plan& plan, const CostModel& cost, const LowerOptions& options)
    : plan_(plan), cost_(cost), options_(options) {
  prog_.system = plan.system;
  prog_.strategy = plan.strategy;
  prog_.world_size = plan.world_size;
  prog_.gpus_per_node = plan.gpus_per_node;
  prog_.backward = options.backward;
  prog_.rows = options.rows;
  const auto n = static_cast<std::size_t>(plan.world_size);
  if (plan.ranks.size() != n) {
    throw Error(ExitCode::runtime, Location{},
                "the plan lists ops for " + std::to_string(plan.ranks.size()) +
                    " ranks but its world size is " + std::to_string(plan.world_size));
  }
  prog_.ranks.resize(n);
  ring_.attention_of_owner.assign(n, -1);
  ring_.dkv_message_in.assign(n, -1);
  ring_.dkv_in.resize(n);
  transfer_message_.resize(n);
  fwd_ids_.resize(n);
  op_collective_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    prog_.ranks[r].rank = static_cast<int>(r);
    const auto ops = plan.ranks[r].ops.size();
    transfer_message_[r].assign(ops, -1);
    fwd_ids_[r].resize(ops);
    op_collective_[r].assign(ops, -1);
    // Routed legs, relays and the backward pass make about five instructions per plan op (measured on
    // 1024-GPU plans); reserving that avoids moving every instruction on growth.
    prog_.ranks[r].instrs.reserve(ops * (options.backward ? 6 : 3) + 8);
  }
  // What executors need of the plan, copied once: the Program stands on its own.
  prog_.sequences = plan.sequences;
  prog_.groups.reserve(plan.groups.size());
  for (const plan::Group& g : plan.groups) prog_.groups.push_back({g.ranks, g.sequences, g.level});
  prog_.linear_layout.resize(n);
  for (const plan::RankLayout& l : plan.linear_layout) {
    if (l.rank >= 0 && static_cast<std::size_t>(l.rank) < n)
      prog_.linear_layout[static_cast<std::size_t>(l.rank)] = l.shards;
  }
  prog_.tensor_parallel_groups = plan.tensor_parallel_groups;
}

void Lowerer::fail(int rank, int op, const std::string& what) const {
  Location where;
  where.rank = rank;
  const std::string prefix = op >= 0 ? "plan op " + std::to_string(op) + ": " : std::string();
  throw Error(ExitCode::runtime, where, prefix + what,
              "run `zeppelin-bench plan --verify` on the scenario (or the plan file): it names the fault");
}

int Lowerer::emit(int rank, Instr&& in) {
  append(rank) = std::move(in);
  return appended(rank);
}

Instr& Lowerer::append(int rank) {
  return prog_.ranks[static_cast<std::size_t>(rank)].instrs.emplace_back();
}

int Lowerer::appended(int rank) {
  const auto& list = prog_.ranks[static_cast<std::size_t>(rank)].instrs;
  for (const int m : list.back().reads) ++prog_.messages[static_cast<std::size_t>(m)].readers;
  return static_cast<int>(list.size()) - 1;
}

IdList Lowerer::joined(int rank, IdList ids, Instr&& like) {
  if (ids.size() <= 1) return ids;
  like.kind = InstrKind::wait;
  like.stream = Stream::comm;
  like.name += " done";
  like.deps = std::move(ids);
  like.reads.clear();
  return {emit(rank, std::move(like))};
}

SliceList Lowerer::owner_slices(int group, int owner, Tensor first, Tensor second,
                                const plan::HeadRange& heads) {
  if (!options_.rows) return {};
  const auto key = std::make_tuple(group, owner, static_cast<int>(first), heads.begin, heads.end);
  if (const auto it = owner_slices_.find(key); it != owner_slices_.end()) return it->second;
  std::vector<Slice> slices;
  if (group >= 0 && static_cast<std::size_t>(group) < plan_.groups.size()) {
    const plan::Group& g = plan_.groups[static_cast<std::size_t>(group)];
    const auto it = std::find(g.ranks.begin(), g.ranks.end(), owner);
    if (it != g.ranks.end()) {
      const int parts = static_cast<int>(g.ranks.size());
      const int pos = static_cast<int>(it - g.ranks.begin());
      for (const Tensor t : {first, second}) {
        for (const int seq : g.sequences) {
          const std::int64_t length = plan_.sequences.at(static_cast<std::size_t>(seq)).length;
          for (const plan::Shard& s : plan::owned_shards(seq, length, parts, pos)) {
            if (s.size() > 0) slices.push_back({t, seq, s.begin, s.end, heads});
          }
        }
      }
    }
  }
  return owner_slices_.emplace(key, SliceList(std::move(slices))).first->second;
}

void Lowerer::pair_transfers() {
  // (src, dst, tag) → the send op; then every recv finds its send. A std::map: deterministic order.
  std::map<std::tuple<int, int, int>, int> send_of;
  const int world = plan_.world_size;
  for (int r = 0; r < world; ++r) {
    const auto& ops = plan_.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const int id = static_cast<int>(i);
      if (op.id != id) fail(r, id, "its id is " + std::to_string(op.id) + ", not its index");
      for (const int d : op.deps) {
        if (d < 0 || d >= id)
          fail(r, id, "depends on op " + std::to_string(d) + ", which is not an earlier op of this rank");
      }
      if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
      if (op.peer < 0 || op.peer >= world || op.peer == r) {
        fail(r, id,
             "its peer " + std::to_string(op.peer) + " is not another rank of the world of " +
                 std::to_string(world));
      }
      if (op.kind == OpKind::send && !send_of.try_emplace({r, op.peer, op.tag}, id).second) {
        fail(r, id,
             "a second send to rank " + std::to_string(op.peer) + " with tag " + std::to_string(op.tag));
      }
    }
  }
  std::map<std::tuple<int, int, int>, int> recv_of;
  for (int r = 0; r < world; ++r) {
    const auto& ops = plan_.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind != OpKind::recv) continue;
      const int id = static_cast<int>(i);
      if (!recv_of.try_emplace({op.peer, r, op.tag}, id).second) {
        fail(r, id,
             "a second recv from rank " + std::to_string(op.peer) + " with tag " + std::to_string(op.tag));
      }
      if (!send_of.contains({op.peer, r, op.tag})) {
        fail(r, id,
             "recv from rank " + std::to_string(op.peer) + " with tag " + std::to_string(op.tag) +
                 ", but that rank has no send to this rank with this tag");
      }
    }
  }
  for (const auto& [key, send_id] : send_of) {
    const auto [src, dst, tag] = key;
    const auto found = recv_of.find(key);
    if (found == recv_of.end()) {
      fail(src, send_id,
           "send to rank " + std::to_string(dst) + " with tag " + std::to_string(tag) +
               ", but that rank has no recv from this rank with this tag");
    }
    const Op& send = plan_.ranks[static_cast<std::size_t>(src)].ops[static_cast<std::size_t>(send_id)];
    const Op& recv = plan_.ranks[static_cast<std::size_t>(dst)].ops[static_cast<std::size_t>(found->second)];
    if (send.bytes != recv.bytes) {
      fail(src, send_id,
           "sends " + std::to_string(send.bytes) + " bytes but its recv on rank " + std::to_string(dst) +
               " (op " + std::to_string(found->second) + ") expects " + std::to_string(recv.bytes));
    }
    Message m;
    m.pass = Pass::fwd;
    m.purpose = Purpose::kv;
    m.src = src;
    m.dst = dst;
    m.group = send.group;
    m.step = send.step;
    m.micro_batch = send.micro_batch;
    m.kv_owner = send.kv_owner;
    if (send.kv_owner >= 0)
      m.slices = owner_slices(send.group, send.kv_owner, Tensor::K, Tensor::V, send.heads);
    m.bytes = send.bytes;
    m.plan_op = send_id;
    const int id = add_message(std::move(m), send.route);
    transfer_message_[static_cast<std::size_t>(src)][static_cast<std::size_t>(send_id)] = id;
    transfer_message_[static_cast<std::size_t>(dst)][static_cast<std::size_t>(found->second)] = id;
    if (send.kv_owner >= 0 && !kv_in_.try_emplace({dst, send.group, send.kv_owner}, id).second) {
      fail(dst, found->second,
           "receives the KV of rank " + std::to_string(send.kv_owner) + " in group " +
               std::to_string(send.group) + " a second time");
    }
  }
}

int Lowerer::add_message(Message m, const plan::Route& route) {
  MessageRoute mr{.first = static_cast<int>(pieces_.size()), .count = 0};
  const auto add_piece = [&](const Piece& p) {
    pieces_.push_back(p);
    ++mr.count;
  };
  const bool routed = route.kind == plan::RouteKind::routed && !route.proxies.empty();
  if (routed) {
    const auto fault = [&](const std::string& what) { fail(m.src, m.plan_op, "its route " + what); };
    if (route.peer_proxies.size() != route.proxies.size() ||
        route.part_bytes.size() != route.proxies.size()) {
      fault("lists " + std::to_string(route.proxies.size()) + " proxies, " +
            std::to_string(route.peer_proxies.size()) + " peer proxies and " +
            std::to_string(route.part_bytes.size()) + " part sizes");
    }
    std::int64_t total = 0;
    // One piece per part; its `chunks` sub-pieces pipeline along the legs inside each instruction, so a
    // 1024-GPU program holds a leg per (part, hop) rather than per (part, chunk, hop).
    const int chunks = std::max(1, route.chunks);
    for (std::size_t part = 0; part < route.proxies.size(); ++part) {
      const int proxy = route.proxies[part], peer_proxy = route.peer_proxies[part];
      const std::int64_t bytes = route.part_bytes[part];
      if (proxy < 0 || proxy >= plan_.world_size || peer_proxy < 0 || peer_proxy >= plan_.world_size) {
        fault("names rank " + std::to_string(proxy < 0 || proxy >= plan_.world_size ? proxy : peer_proxy) +
              ", which is not in the world");
      }
      if (bytes < 0) fault("gives part " + std::to_string(part) + " a negative size");
      total += bytes;
      if (bytes == 0) continue;
      Piece p;
      p.part = static_cast<int>(part);
      p.offset = total - bytes;
      p.bytes = bytes;
      p.chunks = static_cast<int>(std::min<std::int64_t>(chunks, bytes));
      p.hops[0] = m.src;
      p.hop_count = 1;
      for (const int hop : {proxy, peer_proxy, m.dst}) {
        if (hop != p.hops[static_cast<std::size_t>(p.hop_count - 1)])
          p.hops[static_cast<std::size_t>(p.hop_count++)] = hop;
      }
      add_piece(p);
    }
    if (total != m.bytes)
      fault("parts add up to " + std::to_string(total) + " bytes, the send has " + std::to_string(m.bytes));
  }
  if (mr.count == 0) {  // direct (or routed with nothing to move): one piece straight to dst
    Piece p;
    p.bytes = m.bytes;
    p.hops = {m.src, m.dst, -1, -1};
    p.hop_count = 2;
    add_piece(p);
  }
  Piece* const pieces = pieces_.data() + mr.first;
  m.routed = pieces[0].hop_count > 2 || mr.count > 1;
  for (int k = 0; k < mr.count; ++k) {
    Piece& p = pieces[k];
    for (int h = 0; h + 1 < p.hop_count; ++h) {
      p.legs[static_cast<std::size_t>(h)].src = p.hops[static_cast<std::size_t>(h)];
      p.legs[static_cast<std::size_t>(h)].dst = p.hops[static_cast<std::size_t>(h + 1)];
    }
  }
  prog_.messages.push_back(std::move(m));
  routes_.push_back(mr);
  return static_cast<int>(prog_.messages.size()) - 1;
}

namespace {

void fill_transfer(Instr& in, const Message& m, InstrKind kind, Stream stream, const std::string& name,
                   int plan_op) {
  in.kind = kind;
  in.stream = stream;
  in.pass = m.pass;
  in.micro_batch = m.micro_batch;
  in.group = m.group;
  in.step = m.step;
  in.plan_op = plan_op;
  in.name = name;
}

Instr transfer_instr(const Message& m, InstrKind kind, Stream stream, const std::string& name, int plan_op) {
  Instr in;
  fill_transfer(in, m, kind, stream, name, plan_op);
  return in;
}

// A leg's role: the one that crosses nodes is the NIC leg, the ones before and after it are the
// dispatch and combine legs of the routing layer; the one leg of a message that is not routed is direct.
LegRole leg_role(const Message& m, const Piece& p, int leg, int gpus_per_node) {
  if (!m.routed) return LegRole::direct;
  int crossing = -1;
  for (int h = 0; h + 1 < p.hop_count; ++h) {
    if (p.hops[static_cast<std::size_t>(h)] / gpus_per_node !=
        p.hops[static_cast<std::size_t>(h + 1)] / gpus_per_node)
      crossing = h;
  }
  if (leg == crossing) return LegRole::nic;
  return crossing < 0 || leg < crossing ? LegRole::dispatch : LegRole::combine;
}

}  // namespace

void Lowerer::fill_leg(Instr& in, int message, const Piece& p, int leg, InstrKind kind, Stream stream,
                       const std::string& name, int plan_op) const {
  const Message& m = prog_.messages[static_cast<std::size_t>(message)];
  fill_transfer(in, m, kind, stream, name, plan_op);
  in.peer = p.hops[static_cast<std::size_t>(kind == InstrKind::send ? leg + 1 : leg)];
  in.message = message;
  in.offset = p.offset;
  in.bytes = p.bytes;
  in.chunks = p.chunks;
  in.leg = leg_role(m, p, leg, plan_.gpus_per_node);
}

IdList Lowerer::joined_legs(int rank, IdList&& ids, const Message& m, const std::string& name, int plan_op) {
  if (ids.size() <= 1) return ids;  // the usual single piece: no wait, so no template to build
  return joined(rank, std::move(ids), transfer_instr(m, InstrKind::wait, Stream::comm, name, plan_op));
}

IdList Lowerer::emit_first_legs(int message, const IdList& deps, const std::string& name, int plan_op,
                                const IdList& reads) {
  const Message& m = prog_.messages[static_cast<std::size_t>(message)];
  Piece* const pieces = pieces_of(message);
  IdList ids;
  for (int p = 0; p < piece_count(message); ++p) {
    Instr& in = append(m.src);
    fill_leg(in, message, pieces[p], 0, InstrKind::send, Stream::comm, name, plan_op);
    in.deps = deps;
    in.reads = reads;
    const int id = appended(m.src);
    pieces[p].legs[0].send = id;
    ids.push_back(id);
  }
  return joined_legs(m.src, std::move(ids), m, name, plan_op);
}

IdList Lowerer::emit_last_legs(int message, const IdList& deps, const std::string& name, int plan_op) {
  const Message& m = prog_.messages[static_cast<std::size_t>(message)];
  Piece* const pieces = pieces_of(message);
  IdList ids;
  for (int p = 0; p < piece_count(message); ++p) {
    const int last = pieces[p].hop_count - 2;
    Instr& in = append(m.dst);
    fill_leg(in, message, pieces[p], last, InstrKind::recv, Stream::comm, name, plan_op);
    in.deps = deps;
    in.last_leg = true;
    const int id = appended(m.dst);
    pieces[p].legs[static_cast<std::size_t>(last)].recv = id;
    ids.push_back(id);
  }
  return joined_legs(m.dst, std::move(ids), m, name, plan_op);
}

void Lowerer::emit_relays(Pass pass) {
  // Proxies relay in message order, piece order: a deterministic list on every rank. A relay posts its
  // recv at once and streams its chunks on as they arrive (`stream_from`).
  // Relay names by purpose and LegRole: "kv dispatch", "kv nic", "dkv combine".
  const std::string kv_names[] = {"kv", "kv dispatch", "kv nic", "kv combine"};
  const std::string dkv_names[] = {"dkv", "dkv dispatch", "dkv nic", "dkv combine"};
  for (std::size_t mi = 0; mi < prog_.messages.size(); ++mi) {
    if (prog_.messages[mi].pass != pass) continue;
    Piece* const pieces = pieces_of(static_cast<int>(mi));
    const Message& m = prog_.messages[mi];
    const std::string* const names = m.purpose == Purpose::dkv ? dkv_names : kv_names;
    const auto label = [&](const Piece& piece, int leg) -> const std::string& {
      return names[static_cast<int>(leg_role(m, piece, leg, plan_.gpus_per_node))];
    };
    for (int p = 0; p < piece_count(static_cast<int>(mi)); ++p) {
      Piece& piece = pieces[p];
      for (int h = 1; h + 1 < piece.hop_count; ++h) {
        const int rank = piece.hops[static_cast<std::size_t>(h)];
        Instr& recv = append(rank);
        fill_leg(recv, static_cast<int>(mi), piece, h - 1, InstrKind::recv, Stream::relay,
                 label(piece, h - 1), -1);
        const int recv_id = appended(rank);
        piece.legs[static_cast<std::size_t>(h - 1)].recv = recv_id;
        Instr& send = append(rank);
        fill_leg(send, static_cast<int>(mi), piece, h, InstrKind::send, Stream::relay, label(piece, h), -1);
        send.deps = {recv_id};
        send.stream_from = recv_id;
        piece.legs[static_cast<std::size_t>(h)].send = appended(rank);
      }
    }
  }
}

void Lowerer::assign_matches() {
  // Keys count the legs between one ordered (src, dst) pair in creation order, as NCCL matches the k-th
  // send of a pair with the k-th recv.
  std::unordered_map<std::uint64_t, std::uint64_t> next_key;
  const auto world = static_cast<std::uint64_t>(plan_.world_size);
  for (std::size_t mi = 0; mi < routes_.size(); ++mi) {
    const Piece* const pieces = pieces_of(static_cast<int>(mi));
    for (int p = 0; p < piece_count(static_cast<int>(mi)); ++p) {
      for (int h = 0; h + 1 < pieces[p].hop_count; ++h) {
        const Leg& leg = pieces[p].legs[static_cast<std::size_t>(h)];
        if (leg.send < 0 || leg.recv < 0) {
          fail(leg.send < 0 ? leg.src : leg.dst, -1,
               "message " + std::to_string(mi) + " has a leg " + std::to_string(leg.src) + " → " +
                   std::to_string(leg.dst) + " with no " + (leg.send < 0 ? "send" : "recv") +
                   " (a lowering fault)");
        }
        const std::uint64_t key =
            next_key[static_cast<std::uint64_t>(leg.src) * world + static_cast<std::uint64_t>(leg.dst)]++;
        Instr& s = prog_.ranks[static_cast<std::size_t>(leg.src)].instrs[static_cast<std::size_t>(leg.send)];
        Instr& r = prog_.ranks[static_cast<std::size_t>(leg.dst)].instrs[static_cast<std::size_t>(leg.recv)];
        s.match = leg.recv;
        r.match = leg.send;
        s.key = r.key = key;
      }
    }
  }
}

}  // namespace zb::lower::detail
