#pragma once
/// \file Handshake.h
/// The proof, at the start of every connection into storage-sink and into ionproc's link,
/// that the peer belongs to the observation (DESIGN §2.4, "Connection handshake"): a
/// challenge-response over a nonce from each side, keyed with the observation's secret
/// (ObservationSecret.h), so that the secret never crosses the wire and a recorded
/// exchange opens nothing later.
///
///   listener -> connector  Challenge (48 bytes): magic "RTCH", version 1, purpose,
///                          observation id, the listener's nonce (32 random bytes)
///   connector -> listener  Response (72 bytes): magic, version, purpose, the connector's
///                          nonce, HMAC-SHA256(secret, "rtcp-connector" | purpose | id |
///                          listener's nonce | connector's nonce)
///   listener -> connector  Verdict (40 bytes): magic, version, 0 accepted (else why
///                          refused), HMAC-SHA256(secret, "rtcp-listener" | purpose | id |
///                          connector's nonce | listener's nonce): the listener knows the
///                          secret too, so data never go to a process that took the port
///
/// The purpose (storage, link, trigger) and the observation id are in every MAC: a proof for one
/// service or observation opens no other. Nothing else crosses before the verdict.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "rtcp/ObservationSecret.h"

namespace rtcp {

/// What a connection is for (kTrigger: a dump asked of ionproc, TriggerProtocol.h).
enum class ConnectionPurpose : uint8_t { kStorage = 1, kLink = 2, kTrigger = 3 };

/// A handshake that failed: the peer did not prove it belongs to the observation, the
/// listener did not, or the connection ended or stalled in between.
class HandshakeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Handshake {
 public:
  /// How long either side waits for the other's part (a peer that connects and says
  /// nothing holds a connection thread no longer).
  static constexpr double kTimeoutSeconds = 10;

  Handshake(ObservationSecret secret, uint64_t observationId, ConnectionPurpose purpose);

  /// The listening side, right after accept(): challenges the peer and checks its
  /// response; tells it the verdict. HandshakeError (why) when the peer did not prove it
  /// belongs to the observation; the caller closes the connection and logs the peer.
  void acceptPeer(int fd, double timeoutSeconds = kTimeoutSeconds) const;
  /// The connecting side, right after connect(): answers the challenge and checks that
  /// the listener knows the secret. HandshakeError when it was refused or the listener
  /// is not this observation's.
  void proveToPeer(int fd, double timeoutSeconds = kTimeoutSeconds) const;

  uint64_t observationId() const { return observationId_; }
  ConnectionPurpose purpose() const { return purpose_; }

 private:
  ObservationSecret secret_;
  uint64_t observationId_;
  ConnectionPurpose purpose_;
};

/// The peer of a connected socket, for messages: "127.0.0.1:41234", "[::1]:41234", or
/// for a unix socket "unix peer pid 1234 uid 1000".
std::string peerAddress(int fd);

}  // namespace rtcp
