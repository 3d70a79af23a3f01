#include "core/config/did_you_mean.hpp"

#include <algorithm>
#include <cctype>

namespace zb {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the dynamic-programming table at a time: O(|a|·|b|) time, O(|b|) memory.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

static std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  // Long words from a file are not worth comparing (and would cost O(n²)); nothing is that long here.
  if (word.empty() || word.size() > 64) return {};
  const std::size_t tolerance = std::max<std::size_t>(1, word.size() / 3);
  std::string best;
  std::size_t best_distance = tolerance + 1;
  const std::string word_lower = lowered(word);
  for (std::string_view candidate : candidates) {
    const std::size_t d = lowered(candidate) == word_lower ? 0 : edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return closest_match(word, views);
}

std::string quoted_list(std::span<const std::string_view> items) {
  std::string out;
  for (std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += item;
    out += '"';
  }
  return out;
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const std::string best = closest_match(word, candidates);
  return best.empty() ? std::string{} : "did you mean \"" + best + "\"?";
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return did_you_mean(word, views);
}

std::string suggestion_hint(std::string_view word, std::span<const std::string_view> candidates) {
  if (const std::string best = closest_match(word, candidates); !best.empty()) {
    return "did you mean \"" + best + "\"?";
  }
  return "expected one of: " + quoted_list(candidates);
}

std::string suggestion_hint(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return suggestion_hint(word, views);
}

}  // namespace zb
