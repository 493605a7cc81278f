#pragma once
/// \file StationBlockFetcher.h
/// Where a compute rank's stations' blocks come from: ionproc over the link (LinkFetcher),
/// or, in the tests' local mode, the rank's own station input (test/LocalMode.h).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/SharedMemory.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {
class LinkClient;
class SharedBlockMapping;
}  // namespace rtcp::ion

namespace rtcp::correlator {

class StationBlockFetcher {
 public:
  virtual ~StationBlockFetcher() = default;
  /// Station `station`'s block `block` (every subband of the observation): samples, valid
  /// bits, delays. Waits until the block is due. Fills `out` and returns it, or returns a
  /// block lent in place from ionproc's shared memory (read-only), valid until the next
  /// fetch of that station or release().
  virtual const StationBlock& fetch(int64_t block, int station, StationBlock& out) = 0;
  /// Whether lendSubbands() works: every station lent from ionproc's shared memory.
  virtual bool lendsSubbands() const { return false; }
  /// Subbands [first, first + count) of station `station`'s block `block`, lent in place
  /// from ionproc's shared memory (read-only) under lease number `lease`: valid until the
  /// next call with the same station and lease, or release().
  virtual const StationBlock& lendSubbands(int64_t block, int station, int first, int count,
                                           int lease);
  /// Ends the leases of lent blocks (after the last block).
  virtual void release() {}
  /// Statistics for the rank's final report.
  virtual std::string summary() const = 0;
};

/// Fetches from ionproc: from several ionprocs (one per input host), each station from the
/// one that serves it. From an ionproc on this host (sameHost) the blocks are lent in its
/// shared memory (lendStationBlock, link/SharedBlockSegment.h) and used in place; from
/// others, and when the segment cannot be mapped, they come over the socket
/// (serveStationBlock). With a SubbandSlots layout the shared segments hold slots of a
/// rank's share of the subbands, lent by lendSubbands() (lendStationSubbands).
class LinkFetcher : public StationBlockFetcher {
 public:
  /// The layout of ionproc's segment for lendSubbands(): every rank's block sets in flight
  /// of every station (nrSlots), each with a rank's largest share of the subbands.
  struct SubbandSlots {
    int nrSlots = 0, subbandsPerSlot = 0;
  };
  /// Asks every ionproc which stations it serves (servedStations). Throws
  /// std::runtime_error naming the station when one of `needed` (indices) is served by
  /// none of them or a station by two. sameHost[l]: ionproc l runs on this host (empty:
  /// none does). subbandSlots: map segments of that layout (for lendSubbands), not of
  /// whole blocks.
  LinkFetcher(std::vector<std::shared_ptr<ion::LinkClient>> links,
              const ObservationSettings& settings, const std::vector<int>& needed,
              const std::vector<bool>& sameHost = {},
              std::optional<SubbandSlots> subbandSlots = std::nullopt);
  ~LinkFetcher() override;
  const StationBlock& fetch(int64_t block, int station, StationBlock& out) override;
  bool lendsSubbands() const override;
  const StationBlock& lendSubbands(int64_t block, int station, int first, int count,
                                   int lease) override;
  void release() override;
  std::string summary() const override;
  /// Ionprocs reached through shared memory.
  int sharedLinks() const;

 private:
  void mapSharedSegment(size_t link);
  /// Lends from ionproc's shared memory: lease < 0: lendStationBlock, else
  /// lendStationSubbands with that lease number.
  const StationBlock& lend(int64_t block, int station, int first, int count, int lease);
  void fetchOverSocket(int64_t block, int station, StationBlock& out);

  std::vector<std::shared_ptr<ion::LinkClient>> links_;
  std::vector<std::unique_ptr<ion::SharedBlockMapping>> shared_;  ///< [link], null: socket
  std::vector<std::unique_ptr<SharedMemory>> rings_;  ///< [link]: its sample ring, if lent
  std::optional<SubbandSlots> subbandSlots_;
  std::map<std::pair<int, int>, StationBlock> lent_;  ///< (station, lease) -> lent block
  uint64_t lentCount_ = 0;
  std::vector<int> linkOfStation_;  ///< station index -> links_ index, -1: none
  int nrSubbands_;
  uint64_t flaggedByIonproc_ = 0;
  uint64_t fetched_ = 0;
};

}  // namespace rtcp::correlator
