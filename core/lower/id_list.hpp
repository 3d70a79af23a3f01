#pragma once
// IdList: a list of instruction or message ids that keeps up to four in place. Nearly every instruction
// of a Program has one to three dependencies and at most one or two buffers it reads; a std::vector
// per list meant two heap allocations per instruction, most of a 1024-GPU lowering's time.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace zb::lower {

class IdList {
 public:
  IdList() = default;
  IdList(std::initializer_list<int> ids) { append(ids.begin(), ids.end()); }
  IdList(const std::vector<int>& ids) {
    append(ids.data(), ids.data() + ids.size());
  }  // NOLINT: implicit by design
  IdList(const IdList& other) { append(other.begin(), other.end()); }
  IdList(IdList&& other) noexcept { steal(other); }
  IdList& operator=(const IdList& other) {
    if (this != &other) {
      clear();
      append(other.begin(), other.end());
    }
    return *this;
  }
  IdList& operator=(IdList&& other) noexcept {
    if (this != &other) {
      release();
      steal(other);
    }
    return *this;
  }
  IdList& operator=(const std::vector<int>& ids) {
    clear();
    append(ids.data(), ids.data() + ids.size());
    return *this;
  }
  IdList& operator=(std::initializer_list<int> ids) {
    clear();
    append(ids.begin(), ids.end());
    return *this;
  }
  ~IdList() { release(); }

  [[nodiscard]] const int* begin() const { return data(); }
  [[nodiscard]] const int* end() const { return data() + size_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] int operator[](std::size_t i) const { return data()[i]; }
  [[nodiscard]] int front() const { return data()[0]; }
  [[nodiscard]] int back() const { return data()[size_ - 1]; }
  void clear() { size_ = 0; }
  void push_back(int id) { append(&id, &id + 1); }
  void append(const int* first, const int* last) {
    const auto n = static_cast<std::uint32_t>(last - first);
    reserve(size_ + n);
    std::copy(first, last, data() + size_);
    size_ += n;
  }

 private:
  static constexpr std::uint32_t inline_capacity = 4;
  [[nodiscard]] bool on_heap() const { return capacity_ > inline_capacity; }
  [[nodiscard]] const int* data() const { return on_heap() ? heap_ : inline_; }
  [[nodiscard]] int* data() { return on_heap() ? heap_ : inline_; }
  void reserve(std::uint32_t wanted) {
    if (wanted <= capacity_) return;
    const std::uint32_t capacity = std::max(wanted, capacity_ * 2);
    int* grown = new int[capacity];
    std::copy(data(), data() + size_, grown);
    release();
    heap_ = grown;
    capacity_ = capacity;
  }
  // Frees the heap block, if any, and returns to the inline buffer (contents not kept).
  void release() {
    if (on_heap()) delete[] heap_;
    capacity_ = inline_capacity;
  }
  void steal(IdList& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else {
      std::copy(other.inline_, other.inline_ + other.size_, inline_);
    }
    other.size_ = 0;
    other.capacity_ = inline_capacity;
  }

  // Up to four ids in place, more on the heap: 24 bytes in all, as a Program holds two per instruction.
  union {
    int inline_[inline_capacity] = {};
    int* heap_;
  };
  std::uint32_t size_ = 0, capacity_ = inline_capacity;
};

}  // namespace zb::lower
