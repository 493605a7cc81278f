#include "BeamFormedIngest.h"

#include "rtcp/Crc64.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {

BeamFormedIngest::BeamFormedIngest(const ObservationSettings& settings, BeamFormedWriter& writer)
    : settings_(settings), writer_(writer) {}

std::optional<std::string> BeamFormedIngest::check(const BeamFormedHeader& h) const {
  if (auto problem = checkBeamFormedHeader(h)) return problem;
  if (h.observationId != uint64_t(settings_.observationId))
    return "observation id " + std::to_string(h.observationId) + ", not " +
           std::to_string(settings_.observationId);
  const BeamFormedSettings& bf = settings_.beamFormed;
  if (h.sap >= bf.saps.size() || h.tab >= bf.saps[h.sap].tabs.size())
    return "SAP " + std::to_string(h.sap) + " TAB " + std::to_string(h.tab) +
           " is not in the parset";
  if (h.subband >= uint32_t(settings_.nrSubbands()) ||
      settings_.subbands[h.subband].beam != int(h.sap))
    return "subband " + std::to_string(h.subband) + " is not one of SAP " + std::to_string(h.sap);
  const StokesSettings& st = bf.stokes(bf.saps[h.sap].tabs[h.tab]);
  const uint32_t samples = uint32_t(st.outputSamplesPerBlock(settings_.samplesPerBlock()));
  if (h.stokes != uint8_t(st.kind) || h.nrChannels != st.nrChannels || h.nrSamples != samples)
    return "Stokes " + std::to_string(h.stokes) + ", " + std::to_string(h.nrChannels) +
           " channels, " + std::to_string(h.nrSamples) + " samples: the parset gives " +
           stokesName(st.kind) + ", " + std::to_string(st.nrChannels) + ", " +
           std::to_string(samples);
  if (h.block >= uint64_t(settings_.nrBlocks()))
    return "block " + std::to_string(h.block) + " beyond the observation's " +
           std::to_string(settings_.nrBlocks());
  return std::nullopt;
}

bool BeamFormedIngest::receive(ReceiveBuffer& input, std::vector<uint8_t>& payload,
                               const std::string& peer, DurableReplies* replies) {
  const BeamFormedHeader header = BeamFormedHeader::read(input.data());
  input.consume(kBeamFormedHeaderSize);
  bytes += kBeamFormedHeaderSize;
  const bool trusted = !checkBeamFormedHeader(header);  // its length may be skipped
  if (const auto problem = check(header)) {
    ++rejected;
    RTCP_LOG_WARN("storage", peer << ": beam-formed block refused: " << *problem
                                  << (trusted ? "" : "; closing the connection"));
    return trusted && input.skip(header.payloadSize);
  }
  payload.resize(header.payloadSize);
  if (!input.read(payload.data(), header.payloadSize)) {
    ++rejected;
    RTCP_LOG_WARN("storage", peer << ": connection ended in a beam-formed payload");
    return false;
  }
  bytes += header.payloadSize;
  if (crc64(payload.data(), payload.size()) != header.payloadCrc) {
    ++rejected;
    RTCP_LOG_WARN("storage", peer << ": beam-formed block SAP " << header.sap << " TAB "
                                  << header.tab << " subband " << header.subband << " block "
                                  << header.block << ": checksum differs, dropped");
    return true;
  }
  if (!writer_.accept(beamFormedFromPayload(header, payload.data()))) {
    ++rejected;  // none of its files lies on this host
    return true;
  }
  ++blocks;
  if (replies)
    replies->stagedBeamFormed(
        {DurableStream::Kind::kBeamFormed, header.sap, header.tab, header.subband});
  return true;
}

}  // namespace rtcp::storage
