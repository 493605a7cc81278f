#pragma once
/// \file LinkClient.h
/// The compute side of the link: one connection per compute core (thread), which always
/// initiates (LinkProtocol.h). Transfers go straight from and into the caller's buffers.

#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "LinkProtocol.h"
#include "LinkSocket.h"
#include "rtcp/Handshake.h"

namespace rtcp::ion {

class LinkClient {
 public:
  /// Connects core `core` of compute rank `rank` to ionproc, retrying for connectTimeout s,
  /// and proves the connection belongs to the observation (LinkError when ionproc refuses
  /// it or does not know the observation's secret itself).
  LinkClient(const LinkEndpoint& endpoint, int rank, int core, const Handshake& handshake,
             double connectTimeout = 10);

  /// Compute -> ionproc: offers the bytes of `data` with an inline head; sends the agreed
  /// first bytes once ionproc acknowledges. Returns the agreed size; ionproc's inline
  /// head goes to ackHead when given. LinkError when the link fails or ionproc refuses.
  size_t write(std::span<const uint8_t> head, std::span<const iovec> data,
               std::vector<uint8_t>* ackHead = nullptr);
  size_t write(std::span<const uint8_t> head, const void* data, size_t size,
               std::vector<uint8_t>* ackHead = nullptr);

  /// Where the agreed bytes of a read go, chosen once ionproc's head is known; the parts
  /// must hold at least `agreed` bytes.
  using Scatter =
      std::function<std::vector<iovec>(std::span<const uint8_t> ackHead, size_t agreed)>;
  /// ionproc -> compute: accepts up to `size` bytes. Returns the agreed size.
  size_t read(std::span<const uint8_t> head, size_t size, const Scatter& scatter);
  size_t read(std::span<const uint8_t> head, void* data, size_t size,
              std::vector<uint8_t>* ackHead = nullptr);

  int rank() const { return rank_; }
  int core() const { return core_; }
  /// Closes the connection (what a rank that dies does).
  void close() { socket_->shutdown(); }

 private:
  AckHeader request(LinkOp op, std::span<const uint8_t> head, size_t size,
                    std::vector<uint8_t>& ackHead);

  std::unique_ptr<LinkSocket> socket_;
  int rank_, core_;
};

}  // namespace rtcp::ion
