#pragma once
/// \file VisibilityOutput.h
/// Where a compute rank's correlated blocks go: back to ionproc over the link (which
/// integrates them and sends them to storage-sink), or, when the rank reads its input
/// itself, through the rank's own output path (OutputPath.h: integrator, storage-sink
/// and/or a dump file of DESIGN §2.4 blocks), the one ionproc uses.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "OutputPath.h"
#include "rtcp/BeamFormedBlock.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {
class LinkClient;
}  // namespace rtcp::ion

namespace rtcp::correlator {

class VisibilityOutput {
 public:
  virtual ~VisibilityOutput() = default;
  /// One block's correlation of subband index `subbandIndex`.
  virtual void write(int subbandIndex, int64_t block, const CorrelatedData& data) = 0;
  /// One subband-block's beam-formed data, one per TAB of the subband's SAP (DESIGN §2.4b).
  virtual void writeBeamFormed(const std::vector<BeamFormedData>& data) = 0;
  /// After the last block: sends what is left. False when something was lost.
  virtual bool finish() { return true; }
  virtual std::string summary() const = 0;
};

/// Sends each block to ionproc (forwarded functions acceptVisibilities and, per TAB,
/// acceptBeamFormed).
class LinkOutput : public VisibilityOutput {
 public:
  explicit LinkOutput(std::shared_ptr<ion::LinkClient> link);
  void write(int subbandIndex, int64_t block, const CorrelatedData& data) override;
  void writeBeamFormed(const std::vector<BeamFormedData>& data) override;
  std::string summary() const override;

 private:
  std::shared_ptr<ion::LinkClient> link_;
  uint64_t blocks_ = 0;
  uint64_t beamFormedBlocks_ = 0;  ///< TAB-blocks sent
};

/// Integrates this rank's blocks (WorkDistribution keeps an integration on one rank) and
/// sends the integrations to storage-sink and/or appends them to a dump file; sends the
/// beam-formed blocks to the storage-sinks of their files.
class LocalOutput : public VisibilityOutput {
 public:
  LocalOutput(const ObservationSettings& settings, ion::OutputPathOptions options);
  void write(int subbandIndex, int64_t block, const CorrelatedData& data) override;
  void writeBeamFormed(const std::vector<BeamFormedData>& data) override;
  bool finish() override;
  std::string summary() const override;

 private:
  ion::OutputPath path_;
};

}  // namespace rtcp::correlator
