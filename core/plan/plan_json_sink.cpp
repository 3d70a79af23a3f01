#include "core/plan/plan_json_sink.hpp"

namespace zb::plan::detail {

DomSink::DomSink() : root_(nullptr) {}

ojson& DomSink::slot(std::string_view key) {
  if (open_.empty()) return root_;
  ojson& parent = *open_.back();
  if (parent.is_array()) {
    parent.push_back(nullptr);
    return parent.back();
  }
  return parent[std::string(key)];
}

void DomSink::open(std::string_view key, ojson empty) {
  ojson& s = slot(key);
  s = std::move(empty);
  open_.push_back(&s);
}

void DomSink::value(std::string_view key, ojson value) {
  slot(key) = std::move(value);
}

TextSink::TextSink(std::function<void(std::string_view)> out, std::size_t chunk_bytes)
    : out_(std::move(out)), chunk_bytes_(chunk_bytes) {}

void TextSink::member(std::string_view key) {
  if (open_.empty()) return;
  Open& parent = open_.back();
  buffer_ += parent.empty ? "\n" : ",\n";
  parent.empty = false;
  buffer_.append(open_.size(), ' ');
  if (parent.in_object) {
    // Keys are the writer's own identifiers; dump() escapes them all the same.
    buffer_ += ojson(std::string(key)).dump();
    buffer_ += ": ";
  }
}

void TextSink::open(std::string_view key, char bracket) {
  member(key);
  buffer_ += bracket;
  open_.push_back({bracket == '{' ? '}' : ']', bracket == '{'});
}

void TextSink::end() {
  const Open closed = open_.back();
  open_.pop_back();
  if (!closed.empty) {
    buffer_ += '\n';
    buffer_.append(open_.size(), ' ');
  }
  buffer_ += closed.close;
  flush_if_full();
}

void TextSink::value(std::string_view key, ojson value) {
  member(key);
  buffer_ += value.dump();
  flush_if_full();
}

void TextSink::flush_if_full() {
  // Only whole lines leave: a chunk never ends inside a UTF-8 sequence or a number.
  if (buffer_.size() < chunk_bytes_) return;
  const std::size_t cut = buffer_.rfind('\n');
  if (cut == std::string::npos) return;
  out_(std::string_view(buffer_).substr(0, cut + 1));
  buffer_.erase(0, cut + 1);
}

void TextSink::finish() {
  buffer_ += '\n';
  out_(buffer_);
  buffer_.clear();
}

}  // namespace zb::plan::detail
