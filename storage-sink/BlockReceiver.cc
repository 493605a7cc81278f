#include "BlockReceiver.h"

#include "rtcp/Crc64.h"
#include "rtcp/LittleEndian.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {

void BlockReceiver::run(Stream& stream, const std::string& peer) {
  try {
    ReceiveBuffer input(stream, receiveCapacity_);
    while (receiveBlock(input, peer)) {
    }
  } catch (const std::exception& e) {
    RTCP_LOG_WARN("storage", peer << ": connection failed: " << e.what());
  }
}

bool BlockReceiver::receiveBlock(ReceiveBuffer& input, const std::string& peer) {
  try {
    if (!input.fill(kCorrelatedHeaderSize)) {
      if (input.available() == 0) return false;  // clean end
      throw StreamError("ended in the middle of a record (" + std::to_string(input.available()) +
                        " of " + std::to_string(kCorrelatedHeaderSize) + " bytes)");
    }
  } catch (const StreamError& e) {
    statistics_.reject(BlockReject::kTruncated, peer, std::string("in a header: ") + e.what());
    return false;
  }
  if (beamFormed_ && wire::get<uint32_t>(input.data(), 0) == kBeamFormedMagic)
    return beamFormed_->receive(input, beamFormedPayload_, peer, replies_);
  ++statistics_.blocksReceived;
  const CorrelatedHeader header = CorrelatedHeader::read(input.data());
  input.consume(kCorrelatedHeaderSize);
  const HeaderCheck check = validator_.check(header);
  if (check.reason != BlockReject::kNone) {
    statistics_.reject(check.reason, peer,
                       check.detail + (check.payloadSkippable ? "" : "; closing the connection"));
    if (!check.payloadSkippable) return false;
    bool skipped = false;
    try {
      skipped = input.skip(header.payloadSize);
    } catch (const StreamError&) {
    }
    if (!skipped) {
      statistics_.reject(BlockReject::kTruncated, peer, "in a skipped payload");
      return false;
    }
    statistics_.bytesReceived += kCorrelatedHeaderSize;
    return true;
  }

  std::unique_ptr<StagedBlock> block = staging_.acquire();  // blocks while staging is full
  if (!block) return false;                                 // shutting down
  bool complete = false;
  try {
    complete = input.read(block->payload.data(), header.payloadSize);
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
  block->source = source_;
  staging_.stage(check.output, std::move(block));
  if (replies_) replies_->staged(check.output, header.subband);
  return true;
}

}  // namespace rtcp::storage
