#include "core/exec/reference/result_codec.hpp"

#include "core/exec/reference/wire.hpp"

namespace zb::reference {

Bytes encode_result(const RankResult& result) {
  ByteWriter w;
  w.put<std::int32_t>(result.rank);
  w.put<double>(result.verification.max_rel_error);
  w.put<std::int64_t>(result.verification.rows_checked);
  w.put<std::uint64_t>(result.verification.checksum);
  w.put_string(result.verification.failure);
  w.put<std::uint8_t>(result.gradients.ran ? 1 : 0);
  for (const TensorCheck* c : {&result.gradients.dq, &result.gradients.dk, &result.gradients.dv}) {
    w.put<double>(c->max_error);
    w.put<double>(c->max_reference);
    w.put<double>(c->worst_ratio);
    w.put<std::int64_t>(c->rows);
  }
  w.put_string(result.gradients.failure);
  w.put<std::uint64_t>(result.gradients.checksum);
  w.put<std::uint64_t>(result.events.size());
  for (const TraceEvent& e : result.events) {
    w.put<std::int32_t>(e.rank);
    w.put(e.track);
    w.put_string(e.name);
    w.put(e.category);
    w.put(e.pass);
    w.put<std::int32_t>(e.micro_batch);
    w.put(e.start);
    w.put(e.end);
    w.put(e.bytes);
    w.put(e.flops);
    w.put<std::int32_t>(e.op);
    w.put<std::int32_t>(e.peer);
    w.put<std::int32_t>(e.group);
    w.put<std::int32_t>(e.step);
  }
  w.put<std::uint64_t>(result.nic_loads.size());
  for (const LinkLoad& l : result.nic_loads) {
    w.put_string(l.name);
    w.put(l.kind);
    w.put<std::int32_t>(l.node);
    w.put<std::int32_t>(l.index);
    w.put(l.bandwidth);
    w.put(l.bytes);
    w.put(l.busy_seconds);
    w.put<std::uint64_t>(l.series.size());
    for (const LoadPoint& p : l.series) {
      w.put(p.t);
      w.put(p.bytes_per_second);
    }
  }
  return w.take();
}

RankResult decode_result(const Bytes& bytes) {
  ByteReader r(bytes);
  RankResult result;
  result.rank = r.get<std::int32_t>();
  result.verification.max_rel_error = r.get<double>();
  result.verification.rows_checked = r.get<std::int64_t>();
  result.verification.checksum = r.get<std::uint64_t>();
  result.verification.failure = r.get_string();
  result.gradients.ran = r.get<std::uint8_t>() != 0;
  for (TensorCheck* c : {&result.gradients.dq, &result.gradients.dk, &result.gradients.dv}) {
    c->max_error = r.get<double>();
    c->max_reference = r.get<double>();
    c->worst_ratio = r.get<double>();
    c->rows = r.get<std::int64_t>();
  }
  result.gradients.failure = r.get_string();
  result.gradients.checksum = r.get<std::uint64_t>();
  const auto count = r.get<std::uint64_t>();
  result.events.resize(count);
  for (TraceEvent& e : result.events) {
    e.rank = r.get<std::int32_t>();
    e.track = r.get<Track>();
    e.name = r.get_string();
    e.category = r.get<EventCategory>();
    e.pass = r.get<Pass>();
    e.micro_batch = r.get<std::int32_t>();
    e.start = r.get<double>();
    e.end = r.get<double>();
    e.bytes = r.get<double>();
    e.flops = r.get<double>();
    e.op = r.get<std::int32_t>();
    e.peer = r.get<std::int32_t>();
    e.group = r.get<std::int32_t>();
    e.step = r.get<std::int32_t>();
  }
  result.nic_loads.resize(r.get<std::uint64_t>());
  for (LinkLoad& l : result.nic_loads) {
    l.name = r.get_string();
    l.kind = r.get<LinkKind>();
    l.node = r.get<std::int32_t>();
    l.index = r.get<std::int32_t>();
    l.bandwidth = r.get<double>();
    l.bytes = r.get<double>();
    l.busy_seconds = r.get<double>();
    l.measured = true;
    l.series.resize(r.get<std::uint64_t>());
    for (LoadPoint& p : l.series) {
      p.t = r.get<double>();
      p.bytes_per_second = r.get<double>();
    }
  }
  return result;
}

}  // namespace zb::reference
