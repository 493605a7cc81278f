#pragma once
/// \file StatusWord.h
/// A text as one word of a `key=value` status file (StorageStatus, RankStatus): '%', '=',
/// white space, DEL and the characters of `alsoEscape` (e.g. ',' inside a list) as %XX.

#include <string>

namespace rtcp {

std::string encodeStatusWord(const std::string& text, const std::string& alsoEscape = "");
/// The text of encodeStatusWord's word; a '%' not followed by two hex digits stays as it is.
std::string decodeStatusWord(const std::string& word);

}  // namespace rtcp
