#include "VisibilityOutput.h"

#include "CorrelatorFunctions.h"
#include "LinkClient.h"

namespace rtcp::correlator {

LinkOutput::LinkOutput(std::shared_ptr<ion::LinkClient> link) : link_(std::move(link)) {}

void LinkOutput::write(int subbandIndex, int64_t block, const CorrelatedData& data) {
  ion::acceptVisibilities.call(*link_, subbandIndex, block, data.nrStations, data.nrChannels,
                               data.visibilities.span(), data.validSamples.span());
  ++blocks_;
}

void LinkOutput::writeBeamFormed(const std::vector<BeamFormedData>& data) {
  for (const BeamFormedData& tab : data) {
    ion::acceptBeamFormed.call(*link_, tab.subband, tab.block, tab.tab, tab.samples.span(),
                               tab.validFraction.span());
    ++beamFormedBlocks_;
  }
}

std::string LinkOutput::summary() const {
  return std::to_string(blocks_) + " correlated blocks and " + std::to_string(beamFormedBlocks_) +
         " beam-formed TAB-blocks sent to ionproc";
}

}  // namespace rtcp::correlator
