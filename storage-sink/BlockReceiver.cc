#include "BlockReceiver.h"

#include <array>

#include "rtcp/Crc64.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {

void BlockReceiver::run(Stream& stream, const std::string& peer) {
  try {
    while (receiveBlock(stream, peer)) {
    }
  } catch (const std::exception& e) {
    RTCP_LOG_WARN("storage", peer << ": connection failed: " << e.what());
  }
}

bool BlockReceiver::receiveBlock(Stream& stream, const std::string& peer) {
  std::array<uint8_t, kCorrelatedHeaderSize> bytes{};
  try {
    if (!stream.readExact(bytes.data(), bytes.size())) return false;  // clean end
  } catch (const StreamError& e) {
    statistics_.reject(BlockReject::kTruncated, peer, std::string("in a header: ") + e.what());
    return false;
  }
  ++statistics_.blocksReceived;
  const CorrelatedHeader header = CorrelatedHeader::read(bytes.data());
  const HeaderCheck check = validator_.check(header);
  if (check.reason != BlockReject::kNone) {
    statistics_.reject(check.reason, peer,
                       check.detail + (check.payloadSkippable ? "" : "; closing the connection"));
    if (!check.payloadSkippable) return false;
    if (skip(stream, header.payloadSize)) return true;
    statistics_.reject(BlockReject::kTruncated, peer, "in a skipped payload");
    return false;
  }

  std::unique_ptr<StagedBlock> block = staging_.acquire();  // blocks while staging is full
  if (!block) return false;                                 // shutting down
  bool complete = false;
  try {
    complete = stream.readExact(block->payload.data(), header.payloadSize);
  } catch (const StreamError&) {
  }
  if (!complete) {
    staging_.release(std::move(block));
    statistics_.reject(BlockReject::kTruncated, peer,
                       "subband " + std::to_string(header.subband) + " integration " +
                           std::to_string(header.integration) +
                           ": connection ended in the payload");
    return false;
  }
  statistics_.bytesReceived += kCorrelatedHeaderSize + header.payloadSize;
  const uint64_t crc = crc64(block->payload.data(), header.payloadSize);
  if (crc != header.payloadCrc) {
    staging_.release(std::move(block));
    statistics_.reject(BlockReject::kChecksum, peer,
                       "subband " + std::to_string(header.subband) + " integration " +
                           std::to_string(header.integration));
    return true;
  }
  block->header = header;
  staging_.stage(check.output, std::move(block));
  if (replies_) replies_->staged(check.output, header.subband);
  return true;
}

bool BlockReceiver::skip(Stream& stream, uint64_t size) {
  std::array<uint8_t, 1 << 16> scratch;
  try {
    while (size > 0) {
      const size_t chunk = size_t(std::min<uint64_t>(size, scratch.size()));
      if (!stream.readExact(scratch.data(), chunk)) return false;
      size -= chunk;
    }
  } catch (const StreamError&) {
    return false;
  }
  statistics_.bytesReceived += kCorrelatedHeaderSize;
  return true;
}

}  // namespace rtcp::storage
