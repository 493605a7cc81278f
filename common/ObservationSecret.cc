#include "rtcp/ObservationSecret.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace rtcp {
namespace {

std::string errnoText() { return std::strerror(errno); }

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ObservationSecret::~ObservationSecret() { OPENSSL_cleanse(bytes_.data(), bytes_.size()); }

ObservationSecret ObservationSecret::generate() {
  ObservationSecret secret;
  size_t filled = 0;
  while (filled < kSize) {
    const ssize_t n = ::getrandom(secret.bytes_.data() + filled, kSize - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("getrandom: " + errnoText());
    filled += size_t(n);
  }
  return secret;
}

ObservationSecret ObservationSecret::readLine(std::istream& in, const std::string& where) {
  std::string line;
  if (!std::getline(in, line))
    throw std::runtime_error(where + ": no secret (expected a line '" + std::string(kLineTag) +
                             " <" + std::to_string(2 * kSize) + " hex digits>')");
  const std::string tag = std::string(kLineTag) + " ";
  const std::string hex = line.starts_with(tag) ? line.substr(tag.size()) : "";
  ObservationSecret secret;
  bool ok = hex.size() == 2 * kSize;
  for (size_t i = 0; ok && i < kSize; ++i) {
    const int high = hexDigit(hex[2 * i]), low = hexDigit(hex[2 * i + 1]);
    ok = high >= 0 && low >= 0;
    secret.bytes_[i] = uint8_t(high << 4 | low);
  }
  OPENSSL_cleanse(line.data(), line.size());
  if (!ok)
    throw std::runtime_error(where + ": not a secret line (expected '" + std::string(kLineTag) +
                             " <" + std::to_string(2 * kSize) + " hex digits>')");
  return secret;
}

ObservationSecret ObservationSecret::readFile(const std::string& path) {
  if (path == "-") return readLine(std::cin, "standard input");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw std::runtime_error("cannot open the secret file " + path + ": " + errnoText());
  struct stat status {};
  const bool statted = ::fstat(fd, &status) == 0;
  ::close(fd);
  if (!statted)
    throw std::runtime_error("cannot stat the secret file " + path + ": " + errnoText());
  if (!S_ISREG(status.st_mode) || (status.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(status.st_mode & 07777));
    throw std::runtime_error("the secret file " + path + " has mode " + mode +
                             ": other users could read or change it (it must be a plain file "
                             "of mode 0600 or 0400)");
  }
  std::ifstream in(path);
  return readLine(in, path);
}

ObservationSecret ObservationSecret::fromBytes(std::span<const uint8_t, kSize> bytes) {
  ObservationSecret secret;
  std::copy(bytes.begin(), bytes.end(), secret.bytes_.begin());
  return secret;
}

std::string ObservationSecret::runId() const {
  static constexpr char kLabel[] = "rtcp-run-id";
  uint8_t mac[32];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), bytes_.data(), int(kSize), reinterpret_cast<const uint8_t*>(kLabel),
            sizeof kLabel - 1, mac, &length))
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 8; ++i) id += {kHex[mac[i] >> 4], kHex[mac[i] & 15]};
  return id;
}

std::string ObservationSecret::line() const {
  static const char kHex[] = "0123456789abcdef";
  std::string text = std::string(kLineTag) + " ";
  for (uint8_t b : bytes_) text += {kHex[b >> 4], kHex[b & 15]};
  return text + "\n";
}

void ObservationSecret::writeFile(const std::string& path) const {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot create the secret file " + path + ": " + errnoText());
  std::string text = line();
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int error = errno;
  OPENSSL_cleanse(text.data(), text.size());
  const bool closed = ::close(fd) == 0;
  if (n != ssize_t(text.size()) || !closed)
    throw std::runtime_error("cannot write the secret file " + path + ": " +
                             std::strerror(n < 0 ? error : EIO));
}

}  // namespace rtcp
