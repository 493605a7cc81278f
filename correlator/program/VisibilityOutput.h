#pragma once
/// \file VisibilityOutput.h
/// Where a compute rank's correlated and beam-formed blocks go: back to ionproc over the
/// link (LinkOutput; ionproc integrates the correlated ones and sends both to the
/// storage-sinks), or, in the tests' local mode, the correlated ones into the rank's own
/// integrator and a dump file (test/LocalMode.h).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace rtcp::correlator
