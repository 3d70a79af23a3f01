#pragma once
// Internal to the plan writer: where the printed plan goes. One writer (plan_json.cpp) walks the plan once
// and hands each element to a sink; DomSink collects them into one ordered_json (plan::to_json), TextSink
// prints them as they come (plan::write_json), so a plan of a large cluster is never held twice in memory
// and the two forms cannot drift apart. The text layout is one element per line: containers the writer
// opens (the document, `sequences`, `ranks`, one rank, its `ops`, ...) list their members on their own
// lines, indented by depth; every other value is printed compact on one line.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace zb::plan::detail {

using ojson = nlohmann::ordered_json;

class JsonSink {
 public:
  virtual ~JsonSink() = default;
  // `key` names the member inside an object and is ignored inside an array.
  virtual void begin_object(std::string_view key) = 0;
  virtual void begin_array(std::string_view key) = 0;
  virtual void end() = 0;  // closes the innermost open object or array
  virtual void value(std::string_view key, ojson value) = 0;
};

class DomSink final : public JsonSink {
 public:
  DomSink();
  void begin_object(std::string_view key) override { open(key, ojson::object()); }
  void begin_array(std::string_view key) override { open(key, ojson::array()); }
  void end() override { open_.pop_back(); }
  void value(std::string_view key, ojson value) override;
  [[nodiscard]] ojson take() { return std::move(root_); }

 private:
  ojson& slot(std::string_view key);
  void open(std::string_view key, ojson empty);

  ojson root_;
  std::vector<ojson*> open_;  // the containers being filled; the root is opened by the first begin
};

class TextSink final : public JsonSink {
 public:
  // `out` receives whole lines, in chunks of about `chunk_bytes` (and the rest at finish()).
  explicit TextSink(std::function<void(std::string_view)> out, std::size_t chunk_bytes = 1u << 22);
  void begin_object(std::string_view key) override { open(key, '{'); }
  void begin_array(std::string_view key) override { open(key, '['); }
  void end() override;
  void value(std::string_view key, ojson value) override;
  // Ends the last line and hands over what is buffered.
  void finish();

 private:
  void member(std::string_view key);  // the separator, the line break, the indentation and the key
  void open(std::string_view key, char bracket);
  void flush_if_full();

  std::function<void(std::string_view)> out_;
  std::size_t chunk_bytes_;
  std::string buffer_;
  struct Open {
    char close;
    bool in_object;
    bool empty = true;
  };
  std::vector<Open> open_;
};

}  // namespace zb::plan::detail
