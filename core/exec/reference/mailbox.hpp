#pragma once
// Mailbox: the messages that arrived at one rank and were not received yet, matched by (tag, source)
// in arrival order. Not synchronised: the in-process transport guards it with the inbox's mutex, the
// MPI transport owns one per process.
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "core/exec/reference/transport.hpp"

namespace zb::reference {

class Mailbox {
 public:
  void put(Envelope message) { queues_[{message.tag, message.src}].push_back(std::move(message.payload)); }

  std::optional<Bytes> take(int src, Tag tag) {
    const auto it = queues_.find({tag, src});
    if (it == queues_.end()) return std::nullopt;
    return pop_front(it);
  }

  // Ordered by (tag, source): the first key at or after (kind, 0, source 0) is the smallest of that kind.
  std::optional<Envelope> take_kind(MessageKind kind) {
    const auto it = queues_.lower_bound({Tag::make(kind, 0), -1});
    if (it == queues_.end() || it->first.first.kind() != kind) return std::nullopt;
    Envelope message{it->first.second, it->first.first, {}};
    message.payload = pop_front(it);
    return message;
  }

 private:
  using Key = std::pair<Tag, int>;
  using Queues = std::map<Key, std::deque<Bytes>>;

  Bytes pop_front(Queues::iterator it) {
    Bytes payload = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) queues_.erase(it);
    return payload;
  }

  Queues queues_;
};

}  // namespace zb::reference
