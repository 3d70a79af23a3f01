#include "core/exec/cuda/trace_codec.hpp"

#include <concepts>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/common/error.hpp"

namespace zb::cuda {
namespace {

// Each record type lists its fields once, in wire order (`fields` below): the Writer puts them and the
// Reader gets them, so the two directions cannot drift apart. `R` is the type or its const form, `IO` a
// Writer or a Reader. Values go as their bytes (both ends are the same binary on the same kind of
// machine), enums as int, strings and vectors length first.
template <typename IO, typename... F>
void each(IO& io, F&... field) {
  (io(field), ...);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, TraceEvent>
void fields(IO& io, R& e) {
  each(io, e.rank, e.track, e.name, e.category, e.pass, e.micro_batch, e.start, e.end, e.bytes, e.flops, e.op,
       e.peer, e.group, e.step);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, MessageSpan>
void fields(IO& io, R& s) {
  each(io, s.message, s.start, s.end);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, DeviceActivity>
void fields(IO& io, R& a) {
  each(io, a.rank, a.cuda_stream, a.kind, a.name, a.copy_kind, a.pass, a.start, a.end, a.bytes, a.device,
       a.correlation);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, LoadPoint>
void fields(IO& io, R& p) {
  each(io, p.t, p.bytes_per_second);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, LinkLoad>
void fields(IO& io, R& l) {
  each(io, l.name, l.kind, l.node, l.index, l.bandwidth, l.series, l.bytes, l.busy_seconds, l.measured,
       l.expected_bytes);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, std::string>
void fields(IO& io, R& text) {
  each(io, text);
}

template <typename IO, typename R>
requires std::same_as<std::remove_const_t<R>, RankRecord>
void fields(IO& io, R& r) {
  each(io, r.events, r.spans, r.activity, r.links, r.notes);
}

class Writer {
 public:
  template <typename T>
  requires std::is_trivially_copyable_v<T>
  void operator()(const T& value) {
    if constexpr (std::is_enum_v<T>) {
      (*this)(static_cast<int>(value));
    } else {
      const auto* p = reinterpret_cast<const char*>(&value);
      bytes.insert(bytes.end(), p, p + sizeof(T));
    }
  }
  void operator()(const std::string& text) {
    (*this)(static_cast<std::uint32_t>(text.size()));
    bytes.insert(bytes.end(), text.begin(), text.end());
  }
  template <typename T>
  void operator()(const std::vector<T>& items) {
    (*this)(static_cast<std::uint64_t>(items.size()));
    for (const T& item : items) fields(*this, item);
  }
  std::vector<char> bytes;
};

class Reader {
 public:
  explicit Reader(const std::vector<char>& b) : bytes_(b) {}
  template <typename T>
  requires std::is_trivially_copyable_v<T>
  void operator()(T& value) {
    if constexpr (std::is_enum_v<T>) {
      int raw = 0;
      (*this)(raw);
      value = static_cast<T>(raw);
    } else {
      need(sizeof(T));
      std::memcpy(&value, bytes_.data() + at_, sizeof(T));
      at_ += sizeof(T);
    }
  }
  void operator()(std::string& text) {
    std::uint32_t n = 0;
    (*this)(n);
    need(n);
    text.assign(bytes_.data() + at_, n);
    at_ += n;
  }
  // A count more than the bytes left can hold (every element takes at least one) means the record is
  // corrupt: caught before anything is allocated for them.
  template <typename T>
  void operator()(std::vector<T>& items) {
    std::uint64_t n = 0;
    (*this)(n);
    if (n > bytes_.size() - at_) need(bytes_.size() - at_ + 1);
    items.resize(n);
    for (T& item : items) fields(*this, item);
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
  fields(w, record);
  return std::move(w.bytes);
}

RankRecord decode(const std::vector<char>& bytes) {
  Reader r(bytes);
  RankRecord record;
  fields(r, record);
  if (!r.done())
    throw Error(ExitCode::runtime, Location{},
                "backend cuda: a rank's gathered trace record has trailing bytes");
  return record;
}

}  // namespace zb::cuda
