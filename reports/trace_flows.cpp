#include "reports/trace_flows.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace zb::reports {
namespace {

// What both ends of one message agree on.
using TransferKey =
    std::tuple<int, int, int, int, int, int, double>;  // pass, micro-batch, src, dst, group, step, bytes

TransferKey key_of(const TraceEvent& e, bool is_send) {
  const int src = is_send ? e.rank : e.peer;
  const int dst = is_send ? e.peer : e.rank;
  return {static_cast<int>(e.pass), e.micro_batch, src, dst, e.group, e.step, e.bytes};
}

struct Ends {
  std::vector<std::size_t> sends, recvs;
};

nlohmann::ordered_json flow_event(const char* phase, const std::string& name, std::int64_t id,
                                  std::int64_t ts_ns, const Track& track) {
  nlohmann::ordered_json event{
      {"name", name},     {"cat", "transfer"}, {"ph", phase}, {"id", id}, {"ts", trace_microseconds(ts_ns)},
      {"pid", track.pid}, {"tid", track.tid}};
  if (phase[0] == 'f') event["bp"] = "e";  // bind to the enclosing slice, not the next one to start
  return event;
}

}  // namespace

std::vector<TransferPair> match_transfers(const Trace& trace) {
  std::map<TransferKey, Ends> ends;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.peer < 0) continue;
    if (e.category == EventCategory::send) ends[key_of(e, true)].sends.push_back(i);
    if (e.category == EventCategory::recv) ends[key_of(e, false)].recvs.push_back(i);
  }
  const auto by_start = [&](std::size_t a, std::size_t b) {
    return std::tie(trace.events[a].start, a) < std::tie(trace.events[b].start, b);
  };
  std::vector<TransferPair> pairs;
  for (auto& [key, both] : ends) {
    std::sort(both.sends.begin(), both.sends.end(), by_start);
    std::sort(both.recvs.begin(), both.recvs.end(), by_start);
    const std::size_t matched = std::min(both.sends.size(), both.recvs.size());
    for (std::size_t k = 0; k < matched; ++k) pairs.push_back({both.sends[k], both.recvs[k]});
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const TransferPair& a, const TransferPair& b) { return a.send < b.send; });
  return pairs;
}

void add_transfer_flows(const Trace& trace, const TrackLayout& layout, nlohmann::ordered_json& events) {
  std::int64_t id = 0;
  for (const TransferPair& pair : match_transfers(trace)) {
    const std::int64_t send_start = layout.start_ns[pair.send];
    const std::int64_t recv_start = layout.start_ns[pair.recv];
    const std::int64_t recv_end = layout.end_ns[pair.recv];
    const std::int64_t from = send_start + (layout.end_ns[pair.send] - send_start) / 2;
    const std::int64_t to =
        std::clamp(std::max(recv_start + (recv_end - recv_start) / 2, from), recv_start, recv_end);
    if (to < from) continue;  // the recv ended before the send began (clocks of a measured run): no arrow
    const std::string& name = trace.events[pair.send].name;
    const Track& send_track = layout.tracks[static_cast<std::size_t>(layout.track_of_event[pair.send])];
    const Track& recv_track = layout.tracks[static_cast<std::size_t>(layout.track_of_event[pair.recv])];
    ++id;
    events.push_back(flow_event("s", name, id, from, send_track));
    events.push_back(flow_event("f", name, id, to, recv_track));
  }
}

}  // namespace zb::reports
