#include "core/config/jsonc.hpp"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <system_error>
#include <vector>

#include "core/common/error.hpp"

namespace zb {
namespace {

// 1-based line and column of a byte offset. Columns count UTF-8 code points, as editors do.
Location location_of(std::string_view text, std::size_t offset, const std::filesystem::path& file) {
  if (offset > text.size()) offset = text.size();
  Location where{file.string(), {}, 1, 1};
  for (std::size_t i = 0; i < offset; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') {
      ++where.line;
      where.column = 1;
    } else if ((byte & 0xC0u) != 0x80u) {  // not a UTF-8 continuation byte
      ++where.column;
    }
  }
  return where;
}

// Offset of the bracket that opens the first container nested deeper than max_jsonc_depth. Only called
// after the parser has said the input is too deep, to point the user at the spot.
std::size_t offset_of_excess_nesting(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_jsonc_depth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return text.size();
}

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line L, column C: ";
// the position is reported separately (from the byte offset), so keep only the explanation.
std::string explanation_of(const nlohmann::json::exception& e) {
  std::string_view message = e.what();
  if (const auto tag_end = message.find("] "); tag_end != std::string_view::npos)
    message.remove_prefix(tag_end + 2);
  if (message.starts_with("parse error")) {
    if (const auto colon = message.find(": "); colon != std::string_view::npos)
      message.remove_prefix(colon + 2);
  }
  return std::string(message);
}

// Where the literal quoted in a message such as "number overflow parsing '1e400'" first occurs.
std::size_t offset_of_literal(std::string_view text, std::string_view message) {
  const auto open = message.find('\'');
  const auto close = message.rfind('\'');
  if (open == std::string_view::npos || close <= open + 1) return text.size();
  const auto at = text.find(message.substr(open + 1, close - open - 1));
  return at == std::string_view::npos ? text.size() : at;
}

struct TooDeep {};

// "the file is N bytes; the limit is M bytes (16 MiB)", and what to check.
std::string over_limit(std::string_view subject, std::size_t size, std::size_t max_bytes) {
  return fmt::format("{} is {} bytes; the limit is {} bytes ({} MiB)", subject, size, max_bytes,
                     max_bytes >> 20);
}
std::string over_limit_hint(std::size_t max_bytes) {
  return max_bytes == max_jsonc_bytes ? "scenario files are a few KiB; check that this is the right file"
                                      : "check that this is the right file";
}

// Tracks the JSON path while nlohmann parses, to refuse excessive nesting before it is built and to
// report keys written twice in one object (nlohmann would silently keep the last one). It is nlohmann's
// own DOM builder with these checks added on its SAX events: nlohmann's callback parser (parse with a
// callback) scans the parent container for discarded values at every object's end, which made an array
// of n objects cost O(n^2) (400k "{}" took 32 s).
class WatchingDomParser : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;

 public:
  WatchingDomParser(nlohmann::json& result, const std::filesystem::path& file, ProblemList& problems)
      : Base(result, true), file_(file), problems_(problems) {}

  bool null() { return value(Base::null()); }
  bool boolean(bool v) { return value(Base::boolean(v)); }
  bool number_integer(number_integer_t v) { return value(Base::number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) { return value(Base::number_unsigned(v)); }
  bool number_float(number_float_t v, const string_t& text) { return value(Base::number_float(v, text)); }
  bool string(string_t& v) { return value(Base::string(v)); }
  bool binary(binary_t& v) { return value(Base::binary(v)); }

  bool start_object(std::size_t n) {
    open(false);
    return Base::start_object(n);
  }
  bool end_object() {
    close();
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    open(true);
    return Base::start_array(n);
  }
  bool end_array() {
    close();
    return Base::end_array();
  }
  bool key(string_t& k) {
    Frame& top = frames_.back();
    top.key = k;
    if (!top.keys.insert(top.key).second) {
      problems_.add(Location{file_.string(), path(), 0, 0}, "this key appears more than once in its object",
                    "remove one of them");
    }
    return Base::key(k);
  }

 private:
  struct Frame {
    bool is_array;
    std::string key;    // objects: the key being read
    std::size_t index;  // arrays: the element being read
    std::set<std::string> keys;
  };

  void open(bool is_array) {
    // The containers already open; this one would be number size() + 1.
    if (frames_.size() >= static_cast<std::size_t>(max_jsonc_depth)) throw TooDeep{};
    frames_.push_back(Frame{is_array, {}, 0, {}});
  }
  void close() {
    frames_.pop_back();
    finish_element();
  }
  bool value(bool kept) {
    finish_element();
    return kept;
  }
  void finish_element() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.is_array) {
        out += fmt::format("[{}]", f.index);
      } else {
        if (!out.empty()) out += '.';
        out += f.key;
      }
    }
    return out;
  }

  const std::filesystem::path& file_;
  ProblemList& problems_;
  std::vector<Frame> frames_;
};

}  // namespace

std::string strip_jsonc_comments(std::string_view text, const std::filesystem::path& file_for_messages) {
  std::string out(text);
  enum class State { code, string, line_comment, block_comment } state = State::code;
  std::size_t block_start = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case State::code:
        if (c == '"') {
          state = State::string;
        } else if (c == '/' && next == '/') {
          state = State::line_comment;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == '/' && next == '*') {
          state = State::block_comment;
          block_start = i;
          out[i] = out[i + 1] = ' ';
          ++i;
        }
        break;
      case State::string:
        if (c == '\\')
          ++i;  // skip the escaped character, which may be a quote
        else if (c == '"')
          state = State::code;
        break;
      case State::line_comment:
        if (c == '\n')
          state = State::code;
        else
          out[i] = ' ';
        break;
      case State::block_comment:
        if (c == '*' && next == '/') {
          state = State::code;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c != '\n' && c != '\r') {
          out[i] = ' ';
        }
        break;
    }
  }
  if (state == State::block_comment) {
    throw Error(ExitCode::bad_input, location_of(text, block_start, file_for_messages),
                "this /* comment is never closed", "end it with */");
  }
  return out;
}

nlohmann::json parse_jsonc(std::string_view text, const std::filesystem::path& file_for_messages,
                           std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw Error(ExitCode::bad_input, Location{file_for_messages.string(), {}},
                over_limit("the file", text.size(), max_bytes), over_limit_hint(max_bytes));
  }
  // nlohmann's lexer takes a NUL byte for the end of the input, so "{...}\0anything" would parse as its
  // first part and a NUL inside a comment would vanish with it: a text file has no NUL, so refuse any.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw Error(ExitCode::bad_input, location_of(text, nul, file_for_messages), "the file holds a NUL byte",
                "a scenario is UTF-8 text; this looks like a binary or corrupted file");
  }
  const std::string json_text = strip_jsonc_comments(text, file_for_messages);
  ProblemList duplicates;
  nlohmann::json parsed;
  try {
    WatchingDomParser parser(parsed, file_for_messages, duplicates);
    (void)nlohmann::json::sax_parse(json_text, &parser);
  } catch (const TooDeep&) {
    throw Error(ExitCode::bad_input,
                location_of(text, offset_of_excess_nesting(json_text), file_for_messages),
                fmt::format("objects and arrays are nested deeper than {} levels", max_jsonc_depth),
                "a scenario needs only a few levels");
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the position of the last character read, where the error was noticed.
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    throw Error(ExitCode::bad_input, location_of(text, offset, file_for_messages), explanation_of(e));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number literal too large for a double ("1e400"): nlohmann names the literal but not its position.
    throw Error(ExitCode::bad_input,
                location_of(text, offset_of_literal(json_text, e.what()), file_for_messages),
                explanation_of(e));
  }
  duplicates.throw_if_any();
  return parsed;
}

std::string read_text_file(const std::filesystem::path& file, std::size_t max_bytes) {
  const Location where{file.string(), {}};
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(ExitCode::bad_input, where, "no such file");
  if (std::filesystem::is_directory(status))
    throw Error(ExitCode::bad_input, where, "this is a directory, not a file");
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(file, ec);
    if (!ec && size > max_bytes) {
      throw Error(ExitCode::bad_input, where, over_limit("the file", size, max_bytes),
                  over_limit_hint(max_bytes));
    }
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ExitCode::bad_input, where, "cannot open the file for reading");
  // Read in chunks and stop just past the limit, so that a pipe or special file cannot exhaust memory.
  std::string text;
  std::string chunk(64 * 1024, '\0');
  while (in && text.size() <= max_bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ExitCode::bad_input, where, "reading the file failed");
  if (text.size() > max_bytes) {
    throw Error(
        ExitCode::bad_input, where,
        fmt::format("the input is larger than the limit of {} bytes ({} MiB)", max_bytes, max_bytes >> 20));
  }
  return text;
}

nlohmann::json read_jsonc_file(const std::filesystem::path& file, std::size_t max_bytes) {
  return parse_jsonc(read_text_file(file, max_bytes), file, max_bytes);
}

}  // namespace zb
