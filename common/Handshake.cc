#include "rtcp/Handshake.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <span>
#include <string_view>

namespace rtcp {
namespace {

constexpr uint32_t kMagic = 0x48435452;       ///< the bytes "RTCH", little-endian
constexpr uint32_t kBlockMagic = 0x50435452;  ///< "RTCP": a storage block (DESIGN §2.4)
constexpr uint16_t kVersion = 1;
constexpr size_t kNonceSize = 32, kMacSize = 32;
using Nonce = std::array<uint8_t, kNonceSize>;
using Mac = std::array<uint8_t, kMacSize>;

enum Verdict : uint8_t { kAccepted = 0, kWrongPurpose = 1, kBadProof = 2, kBadVersion = 3 };

#pragma pack(push, 1)
struct Challenge {
  uint32_t magic;
  uint16_t version;
  uint8_t purpose, reserved;
  uint64_t observationId;
  Nonce nonce;
};
struct Response {
  uint32_t magic;
  uint16_t version;
  uint8_t purpose, reserved;
  Nonce nonce;
  Mac mac;
};
struct VerdictMessage {
  uint32_t magic;
  uint16_t version;
  uint8_t verdict, reserved;
  Mac mac;
};
#pragma pack(pop)
static_assert(sizeof(Challenge) == 48 && sizeof(Response) == 72 && sizeof(VerdictMessage) == 40);
static_assert(std::endian::native == std::endian::little, "the handshake is little-endian");

using Clock = std::chrono::steady_clock;

Nonce randomNonce() {
  Nonce nonce{};
  size_t filled = 0;
  while (filled < nonce.size()) {
    const ssize_t n = ::getrandom(nonce.data() + filled, nonce.size() - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw HandshakeError(std::string("getrandom: ") + std::strerror(errno));
    filled += size_t(n);
  }
  return nonce;
}

/// Waits for fd to be ready for events until deadline; HandshakeError when it is not.
void waitFor(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw HandshakeError(std::string("no ") + what + " in time");
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, int(left.count()) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw HandshakeError(std::string("poll: ") + std::strerror(errno));
    if (n > 0) return;
  }
}

void sendAll(int fd, const void* data, size_t size, Clock::time_point deadline, const char* what) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (size > 0) {
    waitFor(fd, POLLOUT, deadline, what);
    const ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0)
      throw HandshakeError(std::string("cannot send the ") + what + ": " + std::strerror(errno));
    bytes += n;
    size -= size_t(n);
  }
}

/// Receives exactly size bytes; HandshakeError on an end, an error or the deadline.
void receiveAll(int fd, void* data, size_t size, Clock::time_point deadline, const char* what) {
  auto* bytes = static_cast<uint8_t*>(data);
  size_t got = 0;
  while (got < size) {
    waitFor(fd, POLLIN, deadline, what);
    const ssize_t n = ::recv(fd, bytes + got, size - got, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0)
      throw HandshakeError(std::string("connection failed during the ") + what + ": " +
                           std::strerror(errno));
    if (n == 0)
      throw HandshakeError(std::string("connection closed during the ") + what + " (after " +
                           std::to_string(got) + " of " + std::to_string(size) + " bytes)");
    got += size_t(n);
  }
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

const char* purposeName(uint8_t purpose) {
  switch (ConnectionPurpose(purpose)) {
    case ConnectionPurpose::kStorage:
      return "storage";
    case ConnectionPurpose::kLink:
      return "link";
    case ConnectionPurpose::kTrigger:
      return "trigger";
  }
  return "unknown";
}

/// HMAC-SHA256(secret, label | purpose | observation id | first | second).
Mac proof(const ObservationSecret& secret, std::string_view label, ConnectionPurpose purpose,
          uint64_t observationId, const Nonce& first, const Nonce& second) {
  std::array<uint8_t, 16 + 1 + 8 + 2 * kNonceSize> message{};
  std::memcpy(message.data(), label.data(), std::min<size_t>(label.size(), 16));
  message[16] = uint8_t(purpose);
  std::memcpy(message.data() + 17, &observationId, 8);
  std::memcpy(message.data() + 25, first.data(), kNonceSize);
  std::memcpy(message.data() + 25 + kNonceSize, second.data(), kNonceSize);
  Mac mac{};
  unsigned int length = 0;
  const auto key = secret.bytes();
  if (!HMAC(EVP_sha256(), key.data(), int(key.size()), message.data(), message.size(), mac.data(),
            &length) ||
      length != kMacSize)
    throw HandshakeError("HMAC-SHA256 failed (OpenSSL)");
  return mac;
}

bool equal(const Mac& a, const Mac& b) { return CRYPTO_memcmp(a.data(), b.data(), kMacSize) == 0; }

}  // namespace

Handshake::Handshake(ObservationSecret secret, uint64_t observationId, ConnectionPurpose purpose)
    : secret_(std::move(secret)), observationId_(observationId), purpose_(purpose) {}

void Handshake::acceptPeer(int fd, double timeoutSeconds) const {
  const auto deadline = after(timeoutSeconds);
  Challenge challenge{kMagic, kVersion, uint8_t(purpose_), 0, observationId_, randomNonce()};
  sendAll(fd, &challenge, sizeof challenge, deadline, "challenge");
  Response response{};
  receiveAll(fd, &response, sizeof response, deadline, "response to the challenge");
  VerdictMessage verdict{kMagic, kVersion, kAccepted, 0, {}};
  std::string refusal;
  if (response.magic != kMagic) {
    refusal = response.magic == kBlockMagic
                  ? "sent a block without answering the challenge (no proof of the observation)"
                  : "did not answer the challenge (not an rtcp handshake)";
    verdict.verdict = kBadProof;
  } else if (response.version != kVersion) {
    refusal = "handshake version " + std::to_string(response.version) + ", expected " +
              std::to_string(kVersion);
    verdict.verdict = kBadVersion;
  } else if (response.purpose != uint8_t(purpose_)) {
    refusal = std::string("asked for the ") + purposeName(response.purpose) + " service, this is " +
              purposeName(uint8_t(purpose_));
    verdict.verdict = kWrongPurpose;
  } else if (!equal(response.mac, proof(secret_, "rtcp-connector", purpose_, observationId_,
                                        challenge.nonce, response.nonce))) {
    refusal =
        "wrong proof: it does not know observation " + std::to_string(observationId_) + "'s secret";
    verdict.verdict = kBadProof;
  } else {
    verdict.mac =
        proof(secret_, "rtcp-listener", purpose_, observationId_, response.nonce, challenge.nonce);
  }
  try {
    sendAll(fd, &verdict, sizeof verdict, deadline, "verdict");
  } catch (const HandshakeError&) {
    if (refusal.empty()) throw;  // else the refusal says more
  }
  if (!refusal.empty()) throw HandshakeError(refusal);
}

void Handshake::proveToPeer(int fd, double timeoutSeconds) const {
  const auto deadline = after(timeoutSeconds);
  Challenge challenge{};
  receiveAll(fd, &challenge, sizeof challenge, deadline, "challenge");
  if (challenge.magic != kMagic || challenge.version != kVersion)
    throw HandshakeError("the listener sent no rtcp challenge (version " +
                         std::to_string(challenge.version) + ")");
  if (challenge.purpose != uint8_t(purpose_))
    throw HandshakeError(std::string("the listener is a ") + purposeName(challenge.purpose) +
                         " service, not " + purposeName(uint8_t(purpose_)));
  if (challenge.observationId != observationId_)
    throw HandshakeError("the listener serves observation " +
                         std::to_string(challenge.observationId) + ", not " +
                         std::to_string(observationId_));
  Response response{kMagic, kVersion, uint8_t(purpose_), 0, randomNonce(), {}};
  response.mac =
      proof(secret_, "rtcp-connector", purpose_, observationId_, challenge.nonce, response.nonce);
  sendAll(fd, &response, sizeof response, deadline, "response");
  VerdictMessage verdict{};
  receiveAll(fd, &verdict, sizeof verdict, deadline, "verdict");
  if (verdict.magic != kMagic) throw HandshakeError("the listener sent no verdict");
  switch (verdict.verdict) {
    case kAccepted:
      break;
    case kWrongPurpose:
      throw HandshakeError("refused: the listener serves another purpose");
    case kBadVersion:
      throw HandshakeError("refused: the listener speaks another version");
    default:
      throw HandshakeError("refused: the proof does not match observation " +
                           std::to_string(observationId_) + "'s secret (wrong --secret-file?)");
  }
  if (!equal(verdict.mac, proof(secret_, "rtcp-listener", purpose_, observationId_, response.nonce,
                                challenge.nonce)))
    throw HandshakeError("the listener accepted without proving it knows observation " +
                         std::to_string(observationId_) + "'s secret: not this observation's");
}

std::string peerAddress(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::string unknown = "unknown peer (";  // appended: GCC 12 warns falsely (-Wrestrict)
    unknown += std::strerror(errno);
    unknown += ")";
    return unknown;
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    std::string peer = text;
    peer += ":";
    peer += std::to_string(ntohs(in.sin_port));
    return peer;
  }
  if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    std::string peer = "[";  // appended: GCC 12 warns falsely on "[" + string
    peer += text;
    peer += "]:";
    peer += std::to_string(ntohs(in6.sin6_port));
    return peer;
  }
  if (address.ss_family == AF_UNIX) {
    ucred credentials{};
    socklen_t size = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0)
      return "unix peer pid " + std::to_string(credentials.pid) + " uid " +
             std::to_string(credentials.uid);
    return "unix peer";
  }
  return "peer of family " + std::to_string(address.ss_family);
}

}  // namespace rtcp
