#include "core/exec/cuda/trace_codec.hpp"

#include <cstring>
#include <string>

#include "core/common/error.hpp"

namespace zb::cuda {
namespace {

class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    const auto* p = reinterpret_cast<const char*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put(const std::string& text) {
    put(static_cast<std::uint32_t>(text.size()));
    bytes.insert(bytes.end(), text.begin(), text.end());
  }
  std::vector<char> bytes;
};

class Reader {
 public:
  explicit Reader(const std::vector<char>& b) : bytes_(b) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::string text() {
    const auto n = get<std::uint32_t>();
    need(n);
    std::string s(bytes_.data() + at_, n);
    at_ += n;
    return s;
  }
  [[nodiscard]] bool done() const { return at_ == bytes_.size(); }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n)
      throw Error(ExitCode::runtime, Location{}, "backend cuda: a rank's gathered trace record is truncated");
  }
  const std::vector<char>& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<char> encode(const RankRecord& record) {
  Writer w;
  w.put(static_cast<std::uint64_t>(record.events.size()));
  for (const TraceEvent& e : record.events) {
    w.put(e.rank);
    w.put(static_cast<int>(e.stream));
    w.put(e.name);
    w.put(static_cast<int>(e.category));
    w.put(static_cast<int>(e.pass));
    w.put(e.micro_batch);
    w.put(e.start);
    w.put(e.end);
    w.put(e.bytes);
    w.put(e.flops);
    w.put(e.op);
    w.put(e.peer);
    w.put(e.group);
    w.put(e.step);
  }
  w.put(static_cast<std::uint64_t>(record.spans.size()));
  for (const MessageSpan& s : record.spans) {
    w.put(s.message);
    w.put(s.start);
    w.put(s.end);
  }
  return std::move(w.bytes);
}

RankRecord decode(const std::vector<char>& bytes) {
  Reader r(bytes);
  RankRecord record;
  const auto events = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < events; ++i) {
    TraceEvent e;
    e.rank = r.get<int>();
    e.stream = static_cast<Stream>(r.get<int>());
    e.name = r.text();
    e.category = static_cast<EventCategory>(r.get<int>());
    e.pass = static_cast<Pass>(r.get<int>());
    e.micro_batch = r.get<int>();
    e.start = r.get<double>();
    e.end = r.get<double>();
    e.bytes = r.get<double>();
    e.flops = r.get<double>();
    e.op = r.get<int>();
    e.peer = r.get<int>();
    e.group = r.get<int>();
    e.step = r.get<int>();
    record.events.push_back(std::move(e));
  }
  const auto spans = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < spans; ++i) {
    MessageSpan s;
    s.message = r.get<int>();
    s.start = r.get<double>();
    s.end = r.get<double>();
    record.spans.push_back(s);
  }
  if (!r.done())
    throw Error(ExitCode::runtime, Location{},
                "backend cuda: a rank's gathered trace record has trailing bytes");
  return record;
}

}  // namespace zb::cuda
