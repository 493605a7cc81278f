#pragma once
/// \file BeamFormedIngest.h
/// Beam-formed blocks (docs/DESIGN.md §2.4b, magic RTBF) on a storage-sink connection,
/// beside the correlated ones: the header checked against the observation (observation id,
/// SAP, TAB, subband, Stokes kind, channels and samples the settings give it, block
/// number), the payload read into the connection's buffer and its CRC-64 verified, then
/// the data handed to the BeamFormedWriter of this host's files. Every rejected block is
/// counted by reason and logged naming the field.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "BeamFormedWriter.h"
#include "DurableReplies.h"
#include "ReceiveBuffer.h"
#include "rtcp/BeamFormedWire.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::storage {

class BeamFormedIngest {
 public:
  BeamFormedIngest(const ObservationSettings& settings, BeamFormedWriter& writer);

  /// Why this header is refused (naming the field), nullopt when it is good.
  std::optional<std::string> check(const BeamFormedHeader& header) const;
  /// Receives the block whose header starts input's data (at least 64 bytes buffered):
  /// false when the connection must close (a header whose length cannot be trusted, or the
  /// stream ended inside the block). `payload` is the connection's buffer, grown as needed;
  /// `replies` (nullptr: none) tells the connection's sender what is in the files.
  bool receive(ReceiveBuffer& input, std::vector<uint8_t>& payload, const std::string& peer,
               DurableReplies* replies = nullptr);

  std::atomic<uint64_t> blocks{0};    ///< accepted and written to their files
  std::atomic<uint64_t> rejected{0};  ///< bad header, checksum or not stored here
  std::atomic<uint64_t> bytes{0};     ///< received, headers included

 private:
  const ObservationSettings& settings_;
  BeamFormedWriter& writer_;
};

}  // namespace rtcp::storage
