#include "core/exec/reference/mpi_run.hpp"

#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/exec/nic/nic_sampler.hpp"
#include "core/exec/reference/mpi_abort.hpp"
#include "core/exec/reference/mpi_transport.hpp"
#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/result_codec.hpp"

namespace zb::reference {
namespace {

class Fingerprint {
 public:
  template <typename T>
  void add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    for (std::size_t i = 0; i < sizeof(T); ++i) hash_ = (hash_ ^ bytes[i]) * 0x100000001B3ULL;
  }
  void add(const std::string& text) {
    add(text.size());
    for (const char c : text) add(c);
  }
  void add(const lower::IdList& ids) {
    add(ids.size());
    for (const int id : ids) add(id);
  }
  template <typename T>
  void add(const std::vector<T>& values) {
    add(values.size());
    for (const T& v : values) add(v);
  }
  [[nodiscard]] std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xCBF29CE484222325ULL;
};

// FNV-1a of the Program: every instruction, message and collective, and what it holds of its plan (the
// system, sequences, groups, linear layout, TP groups and attention blocks the reference reads).
// Every process plans and lowers for itself, and a program that differs between processes would mismatch
// keys and hang, so it is caught first.
std::uint64_t program_fingerprint(const lower::Program& program) {
  Fingerprint f;
  f.add(program.system);
  f.add(program.strategy);
  for (const layout::Sequence& s : program.sequences) {
    f.add(s.length);
    f.add(s.micro_batch);
  }
  for (const lower::Group& g : program.groups) {
    f.add(g.ranks);
    f.add(g.sequences);
    f.add(g.level);
  }
  for (const std::vector<layout::Shard>& shards : program.linear_layout) {
    f.add(shards.size());
    for (const layout::Shard& s : shards) {
      f.add(s.seq);
      f.add(s.begin);
      f.add(s.end);
    }
  }
  for (const std::vector<int>& group : program.tensor_parallel_groups) f.add(group);
  for (const layout::AttentionBlock& b : program.blocks) {
    for (const std::int64_t v : {b.q0, b.q1, b.k0, b.k1}) f.add(v);
    f.add(b.seq);
    f.add(b.mask);
    f.add(b.heads.begin);
    f.add(b.heads.end);
  }
  f.add(program.world_size);
  f.add(program.gpus_per_node);
  f.add(program.backward);
  for (const lower::RankProgram& rp : program.ranks) {
    f.add(rp.first_backward);
    f.add(rp.instrs.size());
    for (const lower::Instr& in : rp.instrs) {
      f.add(in.kind);
      f.add(in.stream);
      f.add(in.pass);
      f.add(in.micro_batch);
      f.add(in.group);
      f.add(in.step);
      f.add(in.plan_op);
      f.add(in.name);
      f.add(in.deps);
      f.add(in.m);
      f.add(in.n);
      f.add(in.k);
      f.add(in.peer);
      f.add(in.message);
      f.add(in.offset);
      f.add(in.bytes);
      f.add(in.chunks);
      f.add(in.stream_from);
      f.add(in.leg);
      f.add(in.match);
      f.add(in.key);
      f.add(in.last_leg);
      f.add(in.collective);
      f.add(in.reads);
      f.add(in.kv_owner);
      f.add(in.heads.begin);
      f.add(in.heads.end);
      f.add(in.first_block);
      f.add(in.block_count);
    }
  }
  for (const lower::Message& m : program.messages) {
    f.add(m.pass);
    f.add(m.purpose);
    f.add(m.src);
    f.add(m.dst);
    f.add(m.bytes);
    f.add(m.readers);
    f.add(m.slices.size());
    for (const lower::Slice& s : m.slices) {
      f.add(s.tensor);
      f.add(s.seq);
      f.add(s.begin);
      f.add(s.end);
      f.add(s.heads.begin);
      f.add(s.heads.end);
    }
  }
  for (const lower::Collective& c : program.collectives) {
    f.add(c.kind);
    f.add(c.ranks);
    f.add(c.instrs);
    f.add(c.messages);
  }
  return f.value();
}

void check_same_plan_everywhere(Transport& transport, const RunInputs& inputs) {
  const std::uint64_t mine = program_fingerprint(inputs.program);
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
                  "process " + std::to_string(r) + " planned or lowered a different program of " +
                      inputs.program.system + " than this process; the ranks cannot run it together",
                  "the planner and the lowering must be deterministic for the same scenario and seed");
    }
  }
}

// The node's NIC sampler, on the first rank of each node when the options name NICs (counters are per
// host, so one rank reads them for the node); nullptr elsewhere.
std::unique_ptr<nic::NicSampler> node_sampler(const RunInputs& inputs, int rank) {
  const int per_node = inputs.program.gpus_per_node;
  if (!inputs.options.samples_nics() || per_node <= 0 || rank % per_node != 0) return nullptr;
  const std::vector<std::string> names =
      inputs.options.nics_auto ? nic::default_nic_names() : inputs.options.nics;
  if (names.empty())
    throw Error(ExitCode::bad_input, rank_location(rank),
                "ZB_NICS=auto found no network interface to sample on this host", "name the NICs in ZB_NICS");
  return std::make_unique<nic::NicSampler>(nic::resolve_nics(names), inputs.options.nic_interval,
                                           inputs.start);
}

// Runs `work` on a worker thread while this thread polls the transport (MPI_THREAD_FUNNELED: only this
// thread calls MPI), so that the rank answers the pings of ranks waiting for its records
// (Transport::recv_record): a rank busy verifying for minutes is then told apart from one that stopped.
void compute_while_polling(Transport& transport, const std::function<void()>& work) {
  std::exception_ptr failure;
  std::atomic<bool> done{false};
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire))
    (void)transport.wait_for_message(std::chrono::milliseconds(20));
  worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

int mpi_world_size() {
  return MpiWorld::get().size();
}

std::unique_ptr<Transport> make_mpi_transport() {
  return std::make_unique<MpiTransport>(MpiWorld::get());
}

std::vector<RankResult> run_mpi_rank(Transport& transport, const RunInputs& inputs) {
  const int me = transport.rank();
  try {
    // The sampler starts before the first message of the run: no rank sends a transfer before it has
    // every rank's fingerprint, this one's included.
    std::unique_ptr<nic::NicSampler> sampler = node_sampler(inputs, me);
    if (sampler) sampler->start();
    check_same_plan_everywhere(transport, inputs);
    RankRunner runner(inputs, me, transport);
    runner.compute_with(
        [&transport](const std::function<void()>& work) { compute_while_polling(transport, work); });
    std::vector<nic::Sample> samples;
    if (sampler) runner.on_layer_done([&] { samples = sampler->stop(); });
    RankResult mine = runner.run();
    if (sampler)
      mine.nic_loads = nic::link_loads(samples, me / inputs.program.gpus_per_node, inputs.nic_bandwidth);
    const Bytes encoded = encode_result(mine);
    const Tag tag = Tag::make(MessageKind::result, 0);
    for (int r = 0; r < transport.size(); ++r)
      if (r != me) transport.send(r, tag, encoded);
    // Every rank has finished its instructions (their last barrier), so what is left on the others is
    // their own verification: bounded compute whose length differs between ranks (a rank holding early key
    // rows checks their dK/dV against every later query). It is waited for as long as the rank answers
    // pings (it does while it computes), checked every receive timeout: one that stopped (SIGSTOP, hung)
    // is named and ends the job within about two timeouts, as a stall in the layer does; a rank that fails
    // still aborts the others at once.
    std::vector<RankResult> all(static_cast<std::size_t>(transport.size()));
    for (int r = 0; r < transport.size(); ++r)
      all[static_cast<std::size_t>(r)] =
          r == me ? std::move(mine)
                  : decode_result(transport.recv_record(r, tag, inputs.options.receive_timeout));
    return all;
  } catch (const WaitTimedOut& e) {
    // A stall (RankStalled) or a recv of the executor's own records that timed out. Failing here would
    // leave this process in MPI_Finalize until the rank it waits for gets there, forever if that rank
    // stopped: the job ends now instead, naming the ranks that no longer answer. The grace is the same
    // timeout, so a live rank busy in one compute instruction still gets to answer.
    end_job_after_timeout(transport, e, inputs.options.receive_timeout);
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
