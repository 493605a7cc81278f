#pragma once
/// \file LinkServer.h
/// ionproc's side of the link: accepts compute cores' connections and answers their
/// requests with the operations a LinkService posts. One transfer at a time per direction
/// over all connections (deliberately unfair, as FCNP: the core that holds the link
/// finishes its transfer first). A connection that fails affects no other.

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "LinkProtocol.h"
#include "LinkSocket.h"
#include "rtcp/Handshake.h"

namespace rtcp::ion {

/// A request as ionproc sees it.
struct LinkRequest {
  LinkOp op = LinkOp::kRead;
  int rank = 0;
  int core = 0;
  uint64_t size = 0;              ///< what the compute side offers or accepts
  std::span<const uint8_t> head;  ///< its inline head
  uint64_t connection = 0;        ///< which connection (for per-core state)
};

/// An operation ionproc posts in answer to a request.
struct LinkPosting {
  /// Where a write's bytes go, or what a read sends; their total is ionproc's size.
  std::vector<iovec> data;
  /// Inline head of the acknowledgement (<= kMaxHeadSize bytes).
  std::vector<uint8_t> head;
  /// Refuse the request instead (head: the reason, as text).
  bool refused = false;
  /// Called after the agreed bytes moved (outside the link's direction lock), with the
  /// agreed size; also owns what `data` points to until then.
  std::function<void(size_t agreed)> done;
};

/// What ionproc does with requests (e.g. the plug-in daemon).
class LinkService {
 public:
  virtual ~LinkService() = default;
  /// Answers a request; runs in the requesting core's connection thread and may block
  /// until ionproc's side is ready (others go on meanwhile).
  virtual LinkPosting post(const LinkRequest& request) = 0;
  /// The connection ended (cleanly or not); forget its state.
  virtual void connectionClosed(uint64_t /*connection*/) {}
};

class LinkServer {
 public:
  /// Listens on the endpoint and serves connections with the service until stop(); each
  /// connection must first prove it belongs to the observation (handshake, Handshake.h),
  /// else it is closed, logged with its peer and counted (connectionsRefused).
  LinkServer(const LinkEndpoint& endpoint, LinkService& service, Handshake handshake,
             double transferTimeout = 30);
  ~LinkServer();
  LinkServer(const LinkServer&) = delete;
  LinkServer& operator=(const LinkServer&) = delete;

  /// The endpoint as bound (tcp port 0 replaced by the real one).
  const LinkEndpoint& endpoint() const { return listener_.endpoint(); }
  /// Closes the listener and every connection, and joins their threads.
  void stop();

  struct Statistics {
    uint64_t reads = 0, writes = 0;            ///< completed transfers
    uint64_t bytesRead = 0, bytesWritten = 0;  ///< bulk bytes (read: ionproc -> compute)
    uint64_t connections = 0, connectionsLost = 0;
    uint64_t connectionsOpen = 0;     ///< accepted and not yet ended
    uint64_t connectionsRefused = 0;  ///< failed the handshake: closed before any request
  };
  Statistics statistics() const;

 private:
  struct Connection {
    std::unique_ptr<LinkSocket> socket;
    std::thread thread;
    uint64_t id = 0;
    std::atomic<bool> finished{false};
  };
  void acceptLoop();
  void serve(Connection& connection);
  /// Answers one request; false at the end of the connection.
  bool serveRequest(Connection& connection);
  void reapFinished();

  LinkService& service_;
  Handshake handshake_;
  LinkListener listener_;
  double transferTimeout_;
  std::mutex directionMutex_[2];  ///< [read, write]: one transfer per direction
  mutable std::mutex mutex_;
  std::list<std::unique_ptr<Connection>> connections_;
  Statistics statistics_;
  uint64_t nextId_ = 1;
  bool stopped_ = false;
  std::thread acceptThread_;
};

}  // namespace rtcp::ion
