#include "StationBlockFetcher.h"

#include <sstream>

#include "StationInput.h"
#include "link/LinkClient.h"
#include "plugins/CorrelatorFunctions.h"

namespace rtcp::correlator {

LinkFetcher::LinkFetcher(std::shared_ptr<ion::LinkClient> link, int nrSubbands)
    : link_(std::move(link)), nrSubbands_(nrSubbands) {}

void LinkFetcher::fetch(int64_t block, int station, StationBlock& out) {
  std::span<uint8_t> samples = out.samples.span();
  std::span<uint64_t> valid = out.valid.span();
  const size_t expectedSamples = samples.size(), expectedValid = valid.size();
  ion::serveStationBlock.call(*link_, block, station, 0, nrSubbands_, out.header, samples, valid);
  if (samples.size() != expectedSamples || valid.size() != expectedValid)
    throw std::runtime_error("ionproc served block " + std::to_string(block) + " of station " +
                             std::to_string(station) + " with " + std::to_string(samples.size()) +
                             " sample bytes and " + std::to_string(valid.size()) +
                             " valid words; expected " + std::to_string(expectedSamples) + " and " +
                             std::to_string(expectedValid) + " (do ionproc and correlator read the same parset?)");
  ++fetched_;
  if (out.header.flaggedByIonproc) ++flaggedByIonproc_;
}

std::string LinkFetcher::summary() const {
  std::ostringstream s;
  s << fetched_ << " station blocks fetched from ionproc, " << flaggedByIonproc_
    << " of them served flagged (the ranks were late)";
  return s.str();
}

LocalInputFetcher::LocalInputFetcher(const ObservationSettings& settings,
                                     const std::vector<int>& stations)
    : nrSubbands_(settings.nrSubbands()) {
  if (!stations.empty()) {
    input_ = std::make_unique<ion::StationInput>(settings, stations);
    input_->start();
  }
}

LocalInputFetcher::~LocalInputFetcher() {
  if (input_) input_->stop();
}

void LocalInputFetcher::fetch(int64_t block, int station, StationBlock& out) {
  input_->serveInto(out, block, station, 0, nrSubbands_);
}

std::string LocalInputFetcher::summary() const {
  if (!input_) return "no stations to read";
  std::ostringstream s;
  for (const ion::StationStatistics& st : input_->statistics())
    s << st.station << ": " << st.packetsAccepted << " packets, " << st.blocksServed
      << " blocks served, " << st.samplesFlagged << " of " << st.samplesServed
      << " samples flagged; ";
  return s.str();
}

}  // namespace rtcp::correlator
