#pragma once
/// \file StationBlockFetcher.h
/// Where a compute rank's stations' blocks come from: ionproc over the link (the normal
/// case), or the rank's own station input (StationInput reading the parset's udp: or
/// file: inputs in-process), which lets the correlator run on recordings alone.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {
class LinkClient;
class StationInput;
}  // namespace rtcp::ion

namespace rtcp::correlator {

class StationBlockFetcher {
 public:
  virtual ~StationBlockFetcher() = default;
  /// Fills `out` (sized for every subband of the observation) with station `station`'s
  /// block `block`: samples, valid bits, delays. Waits until the block is due.
  virtual void fetch(int64_t block, int station, StationBlock& out) = 0;
  /// Statistics for the rank's final report.
  virtual std::string summary() const = 0;
};

/// Fetches from ionproc through the forwarded function serveStationBlock: from several
/// ionprocs (one per input host), each station from the one that serves it.
class LinkFetcher : public StationBlockFetcher {
 public:
  /// Asks every ionproc which stations it serves (servedStations). Throws
  /// std::runtime_error naming the station when one of `needed` (indices) is served by
  /// none of them or a station by two.
  LinkFetcher(std::vector<std::shared_ptr<ion::LinkClient>> links,
              const ObservationSettings& settings, const std::vector<int>& needed);
  void fetch(int64_t block, int station, StationBlock& out) override;
  std::string summary() const override;

 private:
  std::vector<std::shared_ptr<ion::LinkClient>> links_;
  std::vector<int> linkOfStation_;  ///< station index -> links_ index, -1: none
  int nrSubbands_;
  uint64_t flaggedByIonproc_ = 0;
  uint64_t fetched_ = 0;
};

/// Reads the given stations' inputs itself.
class LocalInputFetcher : public StationBlockFetcher {
 public:
  LocalInputFetcher(const ObservationSettings& settings, const std::vector<int>& stations);
  ~LocalInputFetcher() override;
  void fetch(int64_t block, int station, StationBlock& out) override;
  std::string summary() const override;

 private:
  std::unique_ptr<ion::StationInput> input_;
  int nrSubbands_;
};

}  // namespace rtcp::correlator
