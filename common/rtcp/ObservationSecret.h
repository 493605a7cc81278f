#pragma once
/// \file ObservationSecret.h
/// The secret that proves a connection belongs to one observation (Handshake.h). observe
/// makes one per observation from the kernel's random source and hands it to its parts
/// where no other user can read it: a file of mode 0600 in the observation directory,
/// passed by path (`--secret-file FILE`), or, for parts on other hosts, the first line of
/// the standard input mpiexec forwards (`--secret-file -`, the parset following). Never
/// in the parset, on a command line or in the environment.

#include <array>
#include <cstdint>
#include <istream>
#include <span>
#include <string>

namespace rtcp {

class ObservationSecret {
 public:
  static constexpr size_t kSize = 32;  ///< bytes: the HMAC-SHA256 key
  /// The line that carries a secret in a file or on standard input: this word, a space,
  /// then kSize bytes in hexadecimal.
  static constexpr const char* kLineTag = "rtcp-secret";

  /// kSize bytes from getrandom(); throws std::runtime_error when the kernel has none.
  static ObservationSecret generate();
  /// Reads a secret from a file written by writeFile(); "-": the first line of standard
  /// input (what follows, a parset, is left to read). Refuses a file other users may read
  /// or write (its mode, naming it) and anything that is not one secret line.
  static ObservationSecret readFile(const std::string& path);
  /// The first line of `in`, a secret line; `where` names the source in errors.
  static ObservationSecret readLine(std::istream& in, const std::string& where);
  /// Writes the secret line into a new file of mode 0600 (never an existing file: a link
  /// another user planted is not followed); throws std::runtime_error naming the file.
  void writeFile(const std::string& path) const;
  /// A secret from its bytes (e.g. broadcast by rank 0 to the other ranks).
  static ObservationSecret fromBytes(std::span<const uint8_t, kSize> bytes);
  /// The run's identity, derived from the secret (HMAC-SHA256 of a fixed label, 16 hex
  /// digits; it tells nothing of the secret): every part of one run of observe, and a part
  /// it restarts, has it; another run has another. storage-sink writes it into each MS and
  /// refuses to append to an MS of another run.
  std::string runId() const;
  /// The secret line (with its newline), for standard input.
  std::string line() const;

  std::span<const uint8_t, kSize> bytes() const { return bytes_; }

  ObservationSecret(const ObservationSecret&) = default;
  ObservationSecret& operator=(const ObservationSecret&) = default;
  ~ObservationSecret();  ///< wipes the bytes

 private:
  ObservationSecret() = default;
  std::array<uint8_t, kSize> bytes_{};
};

}  // namespace rtcp
