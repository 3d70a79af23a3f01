#pragma once
// ByteWriter / ByteReader: the payload format of every transport message (message legs, collective rows,
// fingerprints, result records). Plain memcpy of fixed-size values in this machine's byte order: both ends
// are the same binary on the same kind of machine, and floats must travel bit for bit.
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/exec/reference/transport.hpp"

namespace zb::reference {

class ByteWriter {
 public:
  template <typename T>
  requires std::is_trivially_copyable_v<T>
  void put(const T& value) {
    const auto at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
  }
  template <typename T>
  requires std::is_trivially_copyable_v<T>
  void put_span(std::span<const T> values) {
    put<std::uint64_t>(values.size());
    const auto at = bytes_.size();
    bytes_.resize(at + values.size_bytes());
    if (!values.empty()) std::memcpy(bytes_.data() + at, values.data(), values.size_bytes());
  }
  void put_string(const std::string& text) { put_span(std::span<const char>(text.data(), text.size())); }

  [[nodiscard]] Bytes take() { return std::move(bytes_); }

 private:
  Bytes bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  template <typename T>
  requires std::is_trivially_copyable_v<T> T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  // A length-prefixed array written by put_span, as a view into the payload (no copy).
  template <typename T>
  requires std::is_trivially_copyable_v<T> std::span<const std::byte> get_span_bytes() {
    const auto count = get<std::uint64_t>();
    return take(count * sizeof(T));
  }
  template <typename T>
  void get_into(std::span<T> out) {
    const auto bytes = get_span_bytes<T>();
    if (bytes.size() != out.size_bytes()) throw std::runtime_error("payload array has an unexpected length");
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  std::string get_string() {
    const auto bytes = get_span_bytes<char>();
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  [[nodiscard]] bool at_end() const { return offset_ == bytes_.size(); }

 private:
  std::span<const std::byte> take(std::size_t count) {
    if (count > bytes_.size() - offset_) throw std::runtime_error("payload is shorter than its header says");
    const auto view = bytes_.subspan(offset_, count);
    offset_ += count;
    return view;
  }

  std::span<const std::byte> bytes_;
  std::size_t offset_ = 0;
};

}  // namespace zb::reference
