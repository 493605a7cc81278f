#pragma once
/// \file TriggerService.h
/// ionproc's trigger port: a TCP listener that takes dump requests (TriggerProtocol.h)
/// from holders of the observation's secret (Handshake.h, purpose trigger) and writes the
/// window from the station buffers into recordings (input/StationDump.h), a thread per
/// connection (at most kMaxConnections at once), beside the running observation.

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "StationInput.h"
#include "rtcp/Handshake.h"
#include "rtcp/Stream.h"
#include "rtcp/TriggerProtocol.h"

namespace rtcp::ion {

class TriggerService {
 public:
  static constexpr int kMaxConnections = 4;

  /// Listens on host:port (0: any free port) for dumps of `input`'s stations.
  TriggerService(const std::string& host, uint16_t port, StationInput& input, Handshake handshake);
  ~TriggerService();
  TriggerService(const TriggerService&) = delete;
  TriggerService& operator=(const TriggerService&) = delete;

  uint16_t port() const { return listener_.port(); }
  /// Takes no more connections and waits for the dumps in progress.
  void stop();

  struct Statistics {
    uint64_t dumps = 0;    ///< answered complete or partial
    uint64_t refused = 0;  ///< connections without the secret, and refused requests
  };
  Statistics statistics() const { return {dumps_.load(), refused_.load()}; }

 private:
  void acceptConnections();
  void serve(Stream& connection);
  TriggerAnswer dump(const TriggerRequest& request);

  StationInput& input_;
  Handshake handshake_;
  TcpListener listener_;
  std::atomic<uint64_t> dumps_{0}, refused_{0};
  std::atomic<int> active_{0};
  std::mutex threadsMutex_;
  std::list<std::thread> threads_;  ///< connections'; joined at stop()
  std::atomic<bool> stopped_{false};
  std::thread acceptor_;  ///< last: uses the members above
};

}  // namespace rtcp::ion
