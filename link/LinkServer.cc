#include "LinkServer.h"

#include <sys/socket.h>

#include "rtcp/Logger.h"

namespace rtcp::ion {
namespace {

void setReceiveTimeout(int fd, double seconds) {
  timeval timeout{};
  timeout.tv_sec = time_t(seconds);
  timeout.tv_usec = suseconds_t((seconds - double(timeout.tv_sec)) * 1e6);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
}

}  // namespace

LinkServer::LinkServer(const LinkEndpoint& endpoint, LinkService& service, Handshake handshake,
                       double transferTimeout)
    : service_(service),
      handshake_(std::move(handshake)),
      listener_(endpoint),
      transferTimeout_(transferTimeout) {
  acceptThread_ = std::thread([this] { acceptLoop(); });
  RTCP_LOG_INFO("link", "listening on " << listener_.endpoint().toString());
}

LinkServer::~LinkServer() { stop(); }

void LinkServer::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& c : connections_) c->socket->shutdown();
  }
  listener_.shutdown();
  acceptThread_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(mutex_);
    connections.swap(connections_);
  }
  for (auto& c : connections) c->thread.join();
}

LinkServer::Statistics LinkServer::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

void LinkServer::acceptLoop() {
  while (auto socket = listener_.accept()) {
    std::lock_guard lock(mutex_);
    if (stopped_) break;
    reapFinished();
    auto connection = std::make_unique<Connection>();
    connection->socket = std::move(socket);
    connection->socket->setSendTimeout(transferTimeout_);
    connection->id = nextId_++;
    ++statistics_.connections;
    ++statistics_.connectionsOpen;
    Connection& c = *connection;
    connections_.push_back(std::move(connection));
    c.thread = std::thread([this, &c] { serve(c); });
  }
}

void LinkServer::reapFinished() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->finished) {
      (*it)->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void LinkServer::serve(Connection& connection) {
  const int fd = connection.socket->fileDescriptor();
  try {
    handshake_.acceptPeer(fd);
  } catch (const HandshakeError& e) {
    RTCP_LOG_ERROR("link", "connection " << connection.id << " from " << peerAddress(fd)
                                         << " refused: " << e.what());
    connection.socket->shutdown();
    std::lock_guard lock(mutex_);
    ++statistics_.connectionsRefused;
    --statistics_.connectionsOpen;
    connection.finished = true;
    return;
  }
  try {
    while (serveRequest(connection)) {
    }
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!stopped_) {
      ++statistics_.connectionsLost;
      RTCP_LOG_WARN("link", "connection " << connection.id << " lost: " << e.what());
    }
  }
  service_.connectionClosed(connection.id);
  std::lock_guard lock(mutex_);
  --statistics_.connectionsOpen;
  connection.finished = true;
}

bool LinkServer::serveRequest(Connection& c) {
  RequestHeader header;
  if (!c.socket->receiveOrEnd(&header, sizeof header)) return false;
  if (header.magic != 'F' ||
      (header.op != uint8_t(LinkOp::kRead) && header.op != uint8_t(LinkOp::kWrite)) ||
      header.headSize > kMaxHeadSize)
    throw LinkError(c.socket->name() + ": bad request (magic " + std::to_string(header.magic) +
                    ", op " + std::to_string(header.op) + ")");
  uint8_t head[kMaxHeadSize];
  c.socket->receive(head, header.headSize);
  LinkRequest request{LinkOp(header.op),       header.rank, header.core, header.size,
                      {head, header.headSize}, c.id};

  LinkPosting posting = service_.post(request);
  if (posting.head.size() > kMaxHeadSize) throw LinkError("posted head exceeds 240 bytes");
  AckHeader ack;
  ack.op = header.op;
  ack.headSize = uint8_t(posting.head.size());
  ack.status = uint8_t(posting.refused ? LinkStatus::kRefused : LinkStatus::kOk);
  ack.size = posting.refused ? 0 : std::min<uint64_t>(header.size, totalSize(posting.data));
  std::vector<iovec> parts = {{&ack, sizeof ack}, {posting.head.data(), posting.head.size()}};
  const bool isRead = request.op == LinkOp::kRead;
  if (posting.refused) {
    c.socket->send(parts);
    return true;
  }
  {
    std::lock_guard link(directionMutex_[isRead ? 0 : 1]);
    const std::vector<iovec> bulk = truncated(posting.data, ack.size);
    if (isRead) parts.insert(parts.end(), bulk.begin(), bulk.end());
    c.socket->send(parts);  // acknowledgement, and a read's data right behind it
    if (!isRead && ack.size > 0) {
      setReceiveTimeout(c.socket->fileDescriptor(), transferTimeout_);
      c.socket->receive(bulk);
      setReceiveTimeout(c.socket->fileDescriptor(), 0);
    }
  }
  {
    std::lock_guard lock(mutex_);
    (isRead ? statistics_.reads : statistics_.writes) += 1;
    (isRead ? statistics_.bytesRead : statistics_.bytesWritten) += ack.size;
  }
  if (posting.done) posting.done(ack.size);
  return true;
}

}  // namespace rtcp::ion
