#pragma once
// Suggestions for misspelt keys and names: "unknown key "bandwith" (did you mean "bandwidth"?)".
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zb {

// Levenshtein distance (insertions, deletions, substitutions; each costs 1).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a plausible typo (distance at
// most max(1, |word| / 3), or a case-insensitive match).
[[nodiscard]] std::string closest_match(std::string_view word, std::span<const std::string_view> candidates);
[[nodiscard]] std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// `did you mean "x"?` when there is a close candidate, otherwise "".
[[nodiscard]] std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// `did you mean "x"?` when there is a close candidate, otherwise `expected one of: "a", "b", "c"`.
[[nodiscard]] std::string suggestion_hint(std::string_view word,
                                          std::span<const std::string_view> candidates);
[[nodiscard]] std::string suggestion_hint(std::string_view word, const std::vector<std::string>& candidates);

// `"a", "b", "c"`, for messages.
[[nodiscard]] std::string quoted_list(std::span<const std::string_view> items);

}  // namespace zb
