#pragma once
/// \file VisibilityOutput.h
/// Where a compute rank's correlated blocks go: back to ionproc over the link (which
/// integrates them and sends them to storage-sink), or, when the rank reads its input
/// itself, through the rank's own integrator to storage-sink and/or a dump file of
/// DESIGN §2.4 blocks.

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "rtcp/CorrelatedBlock.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {
class LinkClient;
class Integrator;
class StorageSender;
}  // namespace rtcp::ion

namespace rtcp::correlator {

class VisibilityOutput {
 public:
  virtual ~VisibilityOutput() = default;
  /// One block's correlation of subband index `subbandIndex`.
  virtual void write(int subbandIndex, int64_t block, const CorrelatedData& data) = 0;
  /// After the last block: sends what is left. False when something was lost.
  virtual bool finish() { return true; }
  virtual std::string summary() const = 0;
};

/// Sends each block to ionproc (forwarded function acceptVisibilities).
class LinkOutput : public VisibilityOutput {
 public:
  explicit LinkOutput(std::shared_ptr<ion::LinkClient> link);
  void write(int subbandIndex, int64_t block, const CorrelatedData& data) override;
  std::string summary() const override;

 private:
  std::shared_ptr<ion::LinkClient> link_;
  uint64_t blocks_ = 0;
};

/// Integrates this rank's blocks (WorkDistribution keeps an integration on one rank) and
/// sends the integrations to storage-sink and/or appends them to a dump file.
class LocalOutput : public VisibilityOutput {
 public:
  /// dumpPath empty: no dump; toStorage: send to the parset's storage locations.
  LocalOutput(const ObservationSettings& settings, bool toStorage, const std::string& dumpPath);
  ~LocalOutput() override;
  void write(int subbandIndex, int64_t block, const CorrelatedData& data) override;
  bool finish() override;
  std::string summary() const override;

 private:
  void emit(std::unique_ptr<CorrelatedData> integration);

  int64_t observationId_;
  std::unique_ptr<ion::StorageSender> storage_;
  std::unique_ptr<ion::Integrator> integrator_;
  std::ofstream dump_;
  std::string dumpPath_;
  uint64_t dumped_ = 0;
};

/// Reads a dump file back: the integrations in the order they were written.
std::vector<CorrelatedData> readDump(const std::string& path);

}  // namespace rtcp::correlator
