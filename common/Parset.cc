#include "rtcp/Parset.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "rtcp/Files.h"
#include "rtcp/Logger.h"
#include "rtcp/ParsetLimits.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace {

constexpr int64_t kMaxExpansion = 100'000;  // elements a vector may expand to (LOFAR's: < 1000)

std::string trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

bool isQuoted(std::string_view text) {
  return text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
         text.back() == text.front();
}

std::string unquote(const std::string& text) {
  return isQuoted(text) ? text.substr(1, text.size() - 2) : text;
}

std::optional<int64_t> parseInteger(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parseReal(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<bool> parseBoolean(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (text == "t" || text == "true" || text == "1") return true;
  if (text == "f" || text == "false" || text == "0") return false;
  return std::nullopt;
}

/// The key's value as `parse` reads its text; else the error "bad WHAT 'TEXT'" (and
/// `expected`) naming the key and its line.
template <typename Parse>
auto parsedValue(const Parset& p, const std::string& key, Parse parse, const std::string& what,
                 const std::string& expected = "") {
  const std::string text = p.getString(key);
  const auto value = parse(text);
  if (!value) p.fail(key, "bad " + what + " '" + text + "'" + expected);
  return *value;
}

/// The key's vector, each element as `parse` reads it; else the error "bad WHAT 'ELEMENT'
/// in vector" naming the key and its line.
template <typename Parse>
auto parsedVector(const Parset& p, const std::string& key, Parse parse, const std::string& what) {
  std::vector<std::decay_t<decltype(*parse(std::string()))>> values;
  for (const std::string& element : p.getStringVector(key)) {
    const auto value = parse(element);
    if (!value) p.fail(key, "bad " + what + " '" + element + "' in vector");
    values.push_back(*value);
  }
  return values;
}

/// Follows quotes ('...' or "...") a character at a time: true when `c` lies inside one,
/// or opens or closes it, so that what it means outside quotes does not apply.
bool withinQuotes(char c, char& quote) {
  if (quote) {
    if (c == quote) quote = 0;
    return true;
  }
  if (c == '\'' || c == '"') {
    quote = c;
    return true;
  }
  return false;
}

/// Splits the inside of a vector at commas outside nested brackets and quotes.
std::vector<std::string> splitTopLevel(std::string_view inner) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (withinQuotes(c, quote)) continue;
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth < 0) throw std::invalid_argument("unbalanced ']'");
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(inner.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (quote) throw std::invalid_argument("unterminated quote");
  if (depth != 0) throw std::invalid_argument("unbalanced '['");
  parts.push_back(trim(inner.substr(start)));
  return parts;
}

/// One end of a range: an optional alphabetic prefix and a number (CS001 or 17 or -3).
struct RangeEnd {
  std::string prefix;
  std::string digits;
  int64_t value = 0;
};

std::optional<RangeEnd> parseRangeEnd(const std::string& text) {
  if (const auto value = parseInteger(text)) return RangeEnd{"", text, *value};
  size_t split = 0;
  while (split < text.size() &&
         (std::isalpha(static_cast<unsigned char>(text[split])) || text[split] == '_'))
    ++split;
  const std::string digits = text.substr(split);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const auto value = parseInteger(digits);
  if (!value) return std::nullopt;
  return RangeEnd{text.substr(0, split), digits, *value};
}

/// Expands `first..last` (ascending; CS001..CS003 keeps prefix and zero padding).
void expandRange(const std::string& element, size_t dots, std::vector<std::string>& out) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad range '" + element + "': " + why);
  };
  const auto first = parseRangeEnd(trim(element.substr(0, dots)));
  const auto last = parseRangeEnd(trim(element.substr(dots + 2)));
  if (!first || !last) throw bad("ends must be integers (optionally with a common prefix)");
  if (first->prefix != last->prefix) throw bad("the ends have different prefixes");
  if (last->value < first->value) throw bad("descending");
  const uint64_t count = uint64_t(last->value) - uint64_t(first->value) + 1;  // no overflow
  if (count > uint64_t(kMaxExpansion) || out.size() + count > size_t(kMaxExpansion))
    throw bad("more than " + std::to_string(kMaxExpansion) + " elements");
  const bool padded =
      !first->prefix.empty() || (first->digits.size() > 1 && first->digits[0] == '0');
  const size_t width = padded ? first->digits.size() : 0;
  for (int64_t v = first->value; v <= last->value; ++v) {
    std::string number = std::to_string(v);
    if (number.size() < width) number.insert(0, width - number.size(), '0');
    out.push_back(first->prefix + number);
  }
}

void expandElement(const std::string& element, std::vector<std::string>& out);

/// Expands `N*value`; false when the text before '*' is not a count (then it is literal).
bool expandRepeat(const std::string& element, std::vector<std::string>& out) {
  const size_t star = element.find('*');
  if (star == std::string::npos) return false;
  const std::string count = trim(element.substr(0, star));
  if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos) return false;
  const auto n = parseInteger(count);
  if (!n || *n > kMaxExpansion)
    throw std::invalid_argument("bad repeat count in '" + element + "'");
  const std::string value = trim(element.substr(star + 1));
  if (value.empty()) throw std::invalid_argument("repeat '" + element + "' has no value");
  std::vector<std::string> one;
  expandElement(value, one);
  // Bounded before anything is copied: [1000000*1000000*300] is 3e14 elements.
  if (!one.empty() && (uint64_t(*n) > uint64_t(kMaxExpansion) / one.size() ||
                       out.size() + size_t(*n) * one.size() > size_t(kMaxExpansion)))
    throw std::invalid_argument("repeat '" + element + "' expands to more than " +
                                std::to_string(kMaxExpansion) + " elements");
  for (int64_t i = 0; i < *n; ++i) out.insert(out.end(), one.begin(), one.end());
  return true;
}

void expandElement(const std::string& element, std::vector<std::string>& out) {
  if (element.empty()) throw std::invalid_argument("empty element");
  if (isQuoted(element) || element.front() == '[') {
    out.push_back(unquote(element));
    return;
  }
  if (expandRepeat(element, out)) return;
  // A range: `a..b`, but not a path such as file:../x.rsp.
  const size_t dots = element.find("..");
  if (dots != std::string::npos && element.find_first_of("/:") == std::string::npos) {
    expandRange(element, dots, out);
    return;
  }
  out.push_back(element);
}

/// Cuts a '#' comment that lies outside quotes; throws on an unterminated quote.
std::string stripComment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (!withinQuotes(line[i], quote) && line[i] == '#') return line.substr(0, i);
  }
  if (quote) throw std::invalid_argument("unterminated quote");
  return line;
}

}  // namespace

std::vector<std::string> expandVector(const std::string& text) {
  const std::string t = trim(text);
  std::vector<std::string> out;
  if (t.empty()) return out;
  if (t.front() != '[') {  // a scalar is a vector of one
    expandElement(t, out);
    return out;
  }
  if (t.back() != ']') throw std::invalid_argument("missing ']' in '" + t + "'");
  const std::string inner = t.substr(1, t.size() - 2);
  if (trim(inner).empty()) return out;
  for (const std::string& element : splitTopLevel(inner)) expandElement(element, out);
  return out;
}

namespace {

std::string errorMessage(const std::string& file, int line, const std::string& key,
                         const std::string& problem) {
  std::string message = file;
  if (line > 0) message.append(":").append(std::to_string(line));
  message.append(": ");
  // A problem that names its key already ("required key 'X' is missing") needs no prefix.
  std::string quotedKey;
  quotedKey.append("'").append(key).append("'");
  if (!key.empty() && problem.find(quotedKey) == std::string::npos)
    message.append("key ").append(quotedKey).append(": ");
  return message.append(problem);
}

}  // namespace

ParsetError::ParsetError(const std::string& file, int line, const std::string& key,
                         const std::string& problem)
    : std::runtime_error(errorMessage(file, line, key, problem)),
      file_(file),
      line_(line),
      key_(key) {}

ParsetError::ParsetError(const ParsetError& first, const std::string& message)
    : std::runtime_error(message), file_(first.file_), line_(first.line_), key_(first.key_) {}

namespace {
std::string joinMessages(const std::vector<ParsetError>& errors) {
  if (errors.empty()) return "no errors";
  std::string text = errors.front().what();
  for (size_t i = 1; i < errors.size(); ++i) text.append("\n").append(errors[i].what());
  return text;
}
}  // namespace

ParsetErrors::ParsetErrors(std::vector<ParsetError> errors)
    : ParsetError(errors.empty() ? ParsetError("", 0, "", "no errors") : errors.front(),
                  joinMessages(errors)),
      errors_(std::move(errors)) {}

Parset::Parset(const Parset& other) { *this = other; }

Parset& Parset::operator=(const Parset& other) {
  if (this == &other) return *this;
  std::set<std::string> read, asked;
  {
    std::lock_guard lock(other.readMutex_);
    read = other.read_;
    asked = other.asked_;
  }
  std::lock_guard lock(readMutex_);
  name_ = other.name_;
  entries_ = other.entries_;
  syntaxErrors_ = other.syntaxErrors_;
  read_ = std::move(read);
  asked_ = std::move(asked);
  nextOrder_ = other.nextOrder_;
  return *this;
}

Parset::Parset(Parset&& other) noexcept { *this = std::move(other); }

Parset& Parset::operator=(Parset&& other) noexcept {
  if (this == &other) return *this;
  std::scoped_lock lock(readMutex_, other.readMutex_);
  name_ = std::move(other.name_);
  entries_ = std::move(other.entries_);
  syntaxErrors_ = std::move(other.syntaxErrors_);
  read_ = std::move(other.read_);
  asked_ = std::move(other.asked_);
  nextOrder_ = other.nextOrder_;
  return *this;
}

Parset Parset::fromFile(const std::string& path, SyntaxErrors mode) {
  const std::optional<std::string> text = tryReadFile(path);
  if (!text)
    throw ParsetError(path, 0, "", std::string("cannot open parset: ") + std::strerror(errno));
  return fromString(*text, path, mode);
}

namespace {

/// The first '=' outside quotes, npos when none.
size_t findEquals(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (!withinQuotes(line[i], quote) && line[i] == '=') return i;
  }
  return std::string_view::npos;
}

/// '[' minus ']' outside quotes.
int bracketBalance(std::string_view text) {
  int depth = 0;
  char quote = 0;
  for (const char c : text) {
    if (withinQuotes(c, quote)) continue;
    if (c == '[') ++depth;
    if (c == ']') --depth;
  }
  return depth;
}

/// Removes a trailing backslash (LOFAR's explicit line continuation); true if there was one.
bool takeBackslash(std::string& text) {
  if (text.empty() || text.back() != '\\') return false;
  text = trim(std::string_view(text).substr(0, text.size() - 1));
  return true;
}

/// A value being read, possibly over several lines.
struct OpenValue {
  std::string key;
  std::string value;
  int line = 0;
  int depth = 0;           ///< brackets still open
  bool continued = false;  ///< the last line ended in a backslash
  bool open() const { return !key.empty() && (depth > 0 || continued); }
};

}  // namespace

Parset Parset::fromString(const std::string& text, const std::string& name, SyntaxErrors mode) {
  Parset parset;
  parset.name_ = name;
  std::istringstream lines(text);
  std::string raw;
  OpenValue current;
  std::vector<RepeatedKey> repeats;
  auto finish = [&] {
    if (!current.key.empty()) parset.add(current.key, current.value, current.line, repeats);
    current = OpenValue{};
  };
  auto syntaxError = [&](int lineNumber, const std::string& problem) {
    parset.syntaxErrors_.emplace_back(name, lineNumber, "", problem);
  };
  for (int lineNumber = 1; std::getline(lines, raw); ++lineNumber) {
    // A line (or a value continued over lines) beyond any parset's: refused whole, not
    // quoted, before anything reads it element by element.
    if (raw.size() > kMaxParsetLineBytes ||
        (current.open() && current.value.size() + raw.size() > kMaxParsetLineBytes)) {
      const int where = current.open() ? current.line : lineNumber;
      const size_t equals = raw.find('=');
      const std::string key = current.open() ? current.key
                              : equals < 256 ? trim(std::string_view(raw).substr(0, equals))
                                             : "";
      if (current.open())
        current = OpenValue{};  // the value it continued goes with it
      else
        finish();
      parset.syntaxErrors_.emplace_back(
          name, where, key,
          "a line or value longer than " + std::to_string(kMaxParsetLineBytes) + " bytes (line " +
              std::to_string(lineNumber) + ": " + std::to_string(raw.size()) +
              "): beyond any parset's; skipped");
      continue;
    }
    std::string line;
    try {
      line = trim(stripComment(raw));
    } catch (const std::invalid_argument& e) {
      finish();
      syntaxError(lineNumber, std::string(e.what()) + " in line '" + trim(raw) + "'");
      continue;
    }
    if (line.empty()) continue;
    const size_t equals = findEquals(line);
    if (equals == std::string::npos) {
      if (!current.open()) {
        finish();
        syntaxError(lineNumber, "missing '=' in line '" + line + "'");
        continue;
      }
      current.continued = takeBackslash(line);
      current.depth += bracketBalance(line);
      if (!line.empty()) current.value.append(current.value.empty() ? "" : " ").append(line);
      continue;
    }
    finish();
    const std::string key = trim(std::string_view(line).substr(0, equals));
    if (key.empty() || key.find_first_of(" \t'\"") != std::string::npos) {
      syntaxError(lineNumber, "bad key '" + key + "' in line '" + line + "'");
      continue;
    }
    current.key = key;
    current.value = trim(std::string_view(line).substr(equals + 1));
    current.line = lineNumber;
    current.continued = takeBackslash(current.value);
    current.depth = bracketBalance(current.value);
  }
  finish();
  parset.adoptLofarKeys(repeats);
  parset.logRepeats(repeats);
  if (mode == SyntaxErrors::kThrow && !parset.syntaxErrors_.empty())
    throw ParsetErrors(parset.syntaxErrors_);
  return parset;
}

void Parset::add(const std::string& key, std::string value, int line,
                 std::vector<RepeatedKey>& repeats) {
  const auto previous = entries_.find(key);
  if (previous != entries_.end()) repeats.push_back({key, line, previous->second.line});
  entries_[key] = Entry{std::move(value), line, nextOrder_++};
}

void Parset::logRepeats(const std::vector<RepeatedKey>& repeats) const {
  if (repeats.empty()) return;
  // LOFAR's parsets repeat keys (defaults, then the observation's own): one line for all.
  const RepeatedKey& first = repeats.front();
  if (repeats.size() == 1)
    RTCP_LOG_WARN("parset", name_ << ":" << first.line << ": key '" << first.key
                                  << "' given again (first at line " << first.firstLine
                                  << "); the later value wins");
  else
    RTCP_LOG_WARN("parset", name_ << ": " << repeats.size()
                                  << " keys given again, the later values win; the first '"
                                  << first.key << "' at line " << first.line << " (first at line "
                                  << first.firstLine << ")");
}

void Parset::adoptLofarKeys(std::vector<RepeatedKey>& repeats) {
  static const std::string kSas = "ObsSW.";
  static const std::string kOnline = "Observation.ObservationControl.OnlineControl.";
  std::vector<std::pair<std::string, Entry>> prefixed;
  for (auto it = entries_.lower_bound(kSas); it != entries_.end() && it->first.starts_with(kSas);)
    prefixed.emplace_back(it->first.substr(kSas.size()), it->second), it = entries_.erase(it);
  std::sort(prefixed.begin(), prefixed.end(),
            [](const auto& a, const auto& b) { return a.second.order < b.second.order; });
  for (auto& [key, entry] : prefixed) {
    const auto previous = entries_.find(key);
    if (previous != entries_.end() && previous->second.order > entry.order) continue;  // later wins
    if (previous != entries_.end()) repeats.push_back({key, entry.line, previous->second.line});
    entries_[key] = std::move(entry);
  }
  for (const std::string group : {"Cobalt.", "OLAP."})
    for (auto it = entries_.lower_bound(kOnline + group);
         it != entries_.end() && it->first.starts_with(kOnline + group); ++it)
      entries_.emplace(it->first.substr(kOnline.size()), it->second);  // only where absent
}

void Parset::set(const std::string& key, const std::string& value) {
  entries_[key] = Entry{value, 0, nextOrder_++};
}

bool Parset::isDefined(const std::string& key) const { return ask(key); }

bool Parset::ask(const std::string& key) const {
  {
    std::lock_guard lock(readMutex_);
    asked_.insert(key);
  }
  return entries_.count(key) != 0;
}

const Parset::Entry& Parset::entry(const std::string& key) const {
  ask(key);
  const auto it = entries_.find(key);
  if (it == entries_.end())
    throw ParsetError(name_, 0, key, "required key '" + key + "' is missing");
  markRead(key);
  return it->second;
}

void Parset::markRead(const std::string& key) const {
  std::lock_guard lock(readMutex_);
  read_.insert(key);
}

void Parset::fail(const std::string& key, const std::string& problem) const {
  throw ParsetError(name_, lineOf(key), key, problem);
}

std::string Parset::getString(const std::string& key) const { return unquote(entry(key).value); }

std::string Parset::getString(const std::string& key, const std::string& fallback) const {
  return isDefined(key) ? getString(key) : fallback;
}

bool Parset::getBool(const std::string& key) const {
  return parsedValue(*this, key, parseBoolean, "boolean", " (expected T, F, true, false, 1 or 0)");
}

bool Parset::getBool(const std::string& key, bool fallback) const {
  return isDefined(key) ? getBool(key) : fallback;
}

int64_t Parset::getInt(const std::string& key) const {
  return parsedValue(*this, key, parseInteger, "integer");
}

int64_t Parset::getInt(const std::string& key, int64_t fallback) const {
  return isDefined(key) ? getInt(key) : fallback;
}

double Parset::getDouble(const std::string& key) const {
  return parsedValue(*this, key, parseReal, "number");
}

double Parset::getDouble(const std::string& key, double fallback) const {
  return isDefined(key) ? getDouble(key) : fallback;
}

std::vector<std::string> Parset::getStringVector(const std::string& key) const {
  const std::string& text = entry(key).value;
  try {
    return expandVector(text);
  } catch (const std::invalid_argument& e) {
    fail(key, std::string("bad vector '") + text + "': " + e.what());
  }
}

std::vector<std::string> Parset::getStringVector(const std::string& key,
                                                 const std::vector<std::string>& fallback) const {
  return isDefined(key) ? getStringVector(key) : fallback;
}

std::vector<int64_t> Parset::getIntVector(const std::string& key) const {
  return parsedVector(*this, key, parseInteger, "integer");
}

std::vector<int64_t> Parset::getIntVector(const std::string& key,
                                          const std::vector<int64_t>& fallback) const {
  return isDefined(key) ? getIntVector(key) : fallback;
}

std::vector<double> Parset::getDoubleVector(const std::string& key) const {
  return parsedVector(*this, key, parseReal, "number");
}

std::vector<double> Parset::getDoubleVector(const std::string& key,
                                            const std::vector<double>& fallback) const {
  return isDefined(key) ? getDoubleVector(key) : fallback;
}

std::vector<std::vector<std::string>> Parset::getNestedStringVector(const std::string& key) const {
  std::vector<std::vector<std::string>> nested;
  for (const std::string& element : getStringVector(key)) {
    try {
      nested.push_back(expandVector(element));
    } catch (const std::invalid_argument& e) {
      fail(key, std::string("bad inner vector '") + element + "': " + e.what());
    }
  }
  return nested;
}

double Parset::getTime(const std::string& key) const {
  const std::string text = getString(key);
  double time = 0;
  try {
    time = parseUtc(text);
  } catch (const std::invalid_argument& e) {
    fail(key, e.what());
  }
  if (!(time >= kEarliestTime && time <= kLatestTime))
    fail(key, "'" + text + "' is outside the times rtcp handles, " + formatUtc(kEarliestTime) +
                  " .. " + formatUtc(kLatestTime) +
                  " UTC (RSP packets stamp unsigned 32-bit Unix seconds)");
  return time;
}

std::vector<std::string> Parset::unusedKeys() const {
  std::vector<std::pair<int, std::string>> unused;
  {
    std::lock_guard lock(readMutex_);
    for (const auto& [key, e] : entries_)
      if (!read_.count(key)) unused.emplace_back(e.order, key);
  }
  std::sort(unused.begin(), unused.end());
  std::vector<std::string> keys;
  for (auto& [order, key] : unused) keys.push_back(std::move(key));
  return keys;
}

std::vector<std::string> Parset::askedKeys() const {
  std::lock_guard lock(readMutex_);
  return {asked_.begin(), asked_.end()};
}

int Parset::lineOf(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.line;
}

std::string Parset::where(const std::string& key) const {
  const int line = lineOf(key);
  return line > 0 ? name_ + ":" + std::to_string(line) : name_;
}

std::vector<std::string> Parset::keysWithPrefix(const std::string& prefix) const {
  std::vector<std::string> keys;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.starts_with(prefix); ++it)
    keys.push_back(it->first);
  return keys;
}

std::string Parset::toString() const {
  std::vector<std::pair<int, const std::pair<const std::string, Entry>*>> ordered;
  for (const auto& item : entries_) ordered.emplace_back(item.second.order, &item);
  std::sort(ordered.begin(), ordered.end());
  std::string text;
  for (const auto& [order, item] : ordered) text += item->first + " = " + item->second.value + "\n";
  return text;
}

}  // namespace rtcp
