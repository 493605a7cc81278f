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

std::string LinkOutput::summary() const {
  return std::to_string(blocks_) + " correlated blocks sent to ionproc";
}

LocalOutput::LocalOutput(const ObservationSettings& settings, ion::OutputPathOptions options)
    : path_(settings, std::move(options)) {}

void LocalOutput::write(int subbandIndex, int64_t block, const CorrelatedData& data) {
  path_.add(subbandIndex, block, data.nrStations, data.nrChannels, data.visibilities.span(),
            data.validSamples.span());
}

bool LocalOutput::finish() { return path_.finish(); }

std::string LocalOutput::summary() const {
  std::string text;
  for (const std::string& line : path_.summary()) text += (text.empty() ? "" : "; ") + line;
  return text;
}

}  // namespace rtcp::correlator
