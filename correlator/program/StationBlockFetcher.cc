#include "StationBlockFetcher.h"

#include <sstream>

#include "CorrelatorFunctions.h"
#include "LinkClient.h"
#include "SharedBlockSegment.h"
#include "rtcp/Logger.h"

namespace rtcp::correlator {

LinkFetcher::LinkFetcher(std::vector<std::shared_ptr<ion::LinkClient>> links,
                         const ObservationSettings& settings, const std::vector<int>& needed,
                         const std::vector<bool>& sameHost,
                         std::optional<SubbandSlots> subbandSlots)
    : links_(std::move(links)),
      shared_(links_.size()),
      rings_(links_.size()),
      subbandSlots_(subbandSlots),
      linkOfStation_(size_t(settings.nrStations()), -1),
      nrSubbands_(settings.nrSubbands()) {
  auto name = [&](int station) { return settings.stations.at(size_t(station)).name; };
  for (size_t l = 0; l < links_.size(); ++l) {
    std::vector<int32_t> served(size_t(settings.nrStations()));
    std::span<int32_t> list(served);
    ion::servedStations.call(*links_[l], list);
    for (const int32_t station : list) {
      if (station < 0 || station >= settings.nrStations())
        throw std::runtime_error(
            "ionproc " + std::to_string(l + 1) + " serves station index " +
            std::to_string(station) +
            ", which the parset does not have (do ionproc and correlator read the same parset?)");
      int& link = linkOfStation_[size_t(station)];
      if (link >= 0)
        throw std::runtime_error("station " + name(station) + " is served by ionproc " +
                                 std::to_string(link + 1) + " and by ionproc " +
                                 std::to_string(l + 1));
      link = int(l);
    }
  }
  for (const int station : needed)
    if (linkOfStation_.at(size_t(station)) < 0)
      throw std::runtime_error("no ionproc serves station " + name(station) + " (asked " +
                               std::to_string(links_.size()) + " ionproc" +
                               (links_.size() > 1 ? "s" : "") + ")");
  for (size_t l = 0; l < links_.size() && l < sameHost.size(); ++l)
    if (sameHost[l]) mapSharedSegment(l);
}

LinkFetcher::~LinkFetcher() {
  try {
    release();
  } catch (const std::exception&) {  // ionproc is gone: its leases went with it
  }
}

void LinkFetcher::mapSharedSegment(size_t l) {
  try {
    ion::SharedSegmentInfo info;
    if (subbandSlots_)
      ion::sharedSubbandSegment.call(*links_[l], subbandSlots_->nrSlots,
                                     subbandSlots_->subbandsPerSlot, info);
    else
      ion::sharedBlockSegment.call(*links_[l], info);
    shared_[l] = std::make_unique<ion::SharedBlockMapping>(info);
  } catch (const std::exception& e) {
    RTCP_LOG_WARN("correlator", "ionproc " << l + 1 << ": no shared-memory link (" << e.what()
                                           << "); station blocks come over the socket");
    return;
  }
  SharedMemoryName ring;
  try {
    ion::sharedSampleRing.call(*links_[l], ring);
  } catch (const std::exception& e) {
    shared_[l].reset();
    RTCP_LOG_WARN("correlator", "ionproc " << l + 1 << ": no answer about its sample ring ("
                                           << e.what() << "); station blocks come over the socket");
    return;
  }
  if (ring.bytes == 0) return;  // its station input lends no ring: the slots hold the rows
  try {
    rings_[l] = std::make_unique<SharedMemory>(SharedMemory::openReadOnly(ring));
  } catch (const std::exception& e) {
    shared_[l].reset();
    RTCP_LOG_WARN("correlator", "ionproc " << l + 1 << ": its sample ring cannot be mapped ("
                                           << e.what() << "); station blocks come over the socket");
  }
}

int LinkFetcher::sharedLinks() const {
  int n = 0;
  for (const auto& mapping : shared_) n += mapping != nullptr;
  return n;
}

void LinkFetcher::release() {
  lent_.clear();
  for (size_t l = 0; l < links_.size(); ++l)
    if (shared_[l]) ion::returnStationBlocks.call(*links_[l], links_[l]->rank());
}

const StationBlock& LinkFetcher::fetch(int64_t block, int station, StationBlock& out) {
  const size_t l = size_t(linkOfStation_.at(size_t(station)));
  if (shared_[l] && !subbandSlots_) return lend(block, station, 0, nrSubbands_, -1);
  fetchOverSocket(block, station, out);
  return out;
}

bool LinkFetcher::lendsSubbands() const {
  if (!subbandSlots_) return false;
  for (const int l : linkOfStation_)
    if (l < 0 || !shared_[size_t(l)]) return false;
  return true;
}

const StationBlock& LinkFetcher::lendSubbands(int64_t block, int station, int first, int count,
                                              int lease) {
  if (!lendsSubbands() || lease < 0)
    throw std::logic_error("lendSubbands: not every station is lent in shared memory");
  return lend(block, station, first, count, lease);
}

const StationBlock& LinkFetcher::lend(int64_t block, int station, int first, int count, int lease) {
  const size_t l = size_t(linkOfStation_.at(size_t(station)));
  StationBlockHeader header;
  ion::SharedBlockLocation location;
  lent_.erase({station, lease});  // the call below ends its lease
  if (lease < 0)
    ion::lendStationBlock.call(*links_[l], block, station, first, count, links_[l]->rank(), header,
                               location);
  else
    ion::lendStationSubbands.call(*links_[l], block, station, first, count, links_[l]->rank(),
                                  lease, header, location);
  if (header.nrSubbands != count || header.firstSubband != first || header.station != station ||
      header.block != block)
    throw std::runtime_error(
        "ionproc lent block " + std::to_string(header.block) + " of station " +
        std::to_string(header.station) + " with " + std::to_string(header.nrSubbands) +
        " subbands from " + std::to_string(header.firstSubband) + "; asked for block " +
        std::to_string(block) + " of station " + std::to_string(station) + ", " +
        std::to_string(count) + " subbands from " + std::to_string(first) +
        " (do ionproc and correlator read the same parset?)");
  const StationBlock& lent =
      lent_.insert_or_assign({station, lease}, shared_[l]->block(location, header, rings_[l].get()))
          .first->second;
  ++fetched_;
  ++lentCount_;
  if (header.flaggedByIonproc) ++flaggedByIonproc_;
  return lent;
}

void LinkFetcher::fetchOverSocket(int64_t block, int station, StationBlock& out) {
  std::span<uint8_t> samples = out.samples.span();
  std::span<uint64_t> valid = out.valid.span();
  std::span<SubbandDelay> delays = out.delays.span();
  const size_t expectedSamples = samples.size(), expectedValid = valid.size(),
               expectedDelays = delays.size();
  ion::LinkClient& link = *links_.at(size_t(linkOfStation_.at(size_t(station))));
  ion::serveStationBlock.call(link, block, station, 0, nrSubbands_, out.header, samples, valid,
                              delays);
  if (samples.size() != expectedSamples || valid.size() != expectedValid ||
      delays.size() != expectedDelays)
    throw std::runtime_error("ionproc served block " + std::to_string(block) + " of station " +
                             std::to_string(station) + " with " + std::to_string(samples.size()) +
                             " sample bytes and " + std::to_string(valid.size()) +
                             " valid words; expected " + std::to_string(expectedSamples) + " and " +
                             std::to_string(expectedValid) +
                             " (do ionproc and correlator read the same parset?)");
  ++fetched_;
  if (out.header.flaggedByIonproc) ++flaggedByIonproc_;
}

std::string LinkFetcher::summary() const {
  std::ostringstream s;
  s << fetched_ << " station blocks fetched from " << links_.size() << " ionproc"
    << (links_.size() > 1 ? "s" : "") << " (" << lentCount_ << " lent in shared memory), "
    << flaggedByIonproc_ << " of them served flagged (the ranks were late)";
  return s.str();
}

const StationBlock& StationBlockFetcher::lendSubbands(int64_t, int, int, int, int) {
  throw std::logic_error("lendSubbands: this fetcher lends nothing");
}

}  // namespace rtcp::correlator
