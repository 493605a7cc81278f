#pragma once
/// \file Files.h
/// Whole files read and written in one call: the one place every part reads a file into a
/// string and replaces a file atomically.

#include <optional>
#include <string>

namespace rtcp {

/// The whole file, bytes as they are; std::nullopt when it cannot be opened or read
/// (errno says why).
std::optional<std::string> tryReadFile(const std::string& path);
/// The same; throws std::runtime_error "PATH: cannot read: REASON" when it cannot.
std::string readFile(const std::string& path);

/// Replaces path by text atomically (writes path.tmp, then renames it over path), so
/// that a reader sees the old or the new file, never a partial one. Throws
/// std::runtime_error naming the file.
void writeFileAtomically(const std::string& path, const std::string& text);

}  // namespace rtcp
