#pragma once
/// \file CorrelatorFunctions.h
/// The functions the correlator's compute ranks call on ionproc (served by the correlator
/// plug-in, plugins/CorrelatorPlugin.cc). Include this on both sides.

#include <complex>
#include <cstdint>

#include "Forwarding.h"
#include "SharedBlockSegment.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {

/// One station's delayed samples of a block for subbands [firstSubband, firstSubband +
/// nrSubbands): the StationBlock's header, samples[subband][time] (RSP encoding),
/// valid[subband][time / 64] bits and delays[subband]. Waits until the block is due
/// (BlockSource::serveInto).
RTCP_FORWARDED(serveStationBlock,
               void(int64_t block, int32_t station, int32_t firstSubband, int32_t nrSubbands,
                    Out<StationBlockHeader> header, Out<Span<uint8_t>> samples,
                    Out<Span<uint64_t>> valid, Out<Span<SubbandDelay>> delays));

/// The shared-memory path (SharedBlockSegment.h), for ranks on ionproc's host: where
/// ionproc's segment of lent blocks is. Refused when this ionproc has no station input.
RTCP_FORWARDED(sharedBlockSegment, void(Out<SharedSegmentInfo> segment));

/// As serveStationBlock, but the block is served into a slot of the shared segment and
/// lent, not sent: `location` says where, `header` its shape. The lease lasts until rank
/// `rank` asks for station `station`'s next block or calls returnStationBlocks.
RTCP_FORWARDED(lendStationBlock,
               void(int64_t block, int32_t station, int32_t firstSubband, int32_t nrSubbands,
                    int32_t rank, Out<StationBlockHeader> header,
                    Out<SharedBlockLocation> location));

/// The shared-memory path for ranks that take their own subbands of every station straight
/// from ionproc (no exchange between the ranks): the segment is made at the first call with
/// `nrSlots` slots of `subbandsPerSlot` subbands each (every rank asks for the same layout;
/// a different one is refused), and its blocks are lent with lendStationSubbands.
RTCP_FORWARDED(sharedSubbandSegment,
               void(int32_t nrSlots, int32_t subbandsPerSlot, Out<SharedSegmentInfo> segment));

/// As lendStationBlock, with lease number `lease` (0..4095): the lease lasts until rank
/// `rank` asks for station `station` with the same lease number again (or calls
/// returnStationBlocks), so a rank may hold several blocks of a station at once, one per
/// lease number (a rank's block sets in flight).
RTCP_FORWARDED(lendStationSubbands,
               void(int64_t block, int32_t station, int32_t firstSubband, int32_t nrSubbands,
                    int32_t rank, int32_t lease, Out<StationBlockHeader> header,
                    Out<SharedBlockLocation> location));

/// Where this ionproc's sample ring is (name, bytes and nonce): blocks lent with
/// header.rowsInRing point into it (StationBlock::rowOffsets). bytes = 0 when its station
/// input lends from no ring (then lent blocks hold their rows).
RTCP_FORWARDED(sharedSampleRing, void(Out<SharedMemoryName> ring));

/// Ends every lease rank `rank` holds (at its end).
RTCP_FORWARDED(returnStationBlocks, void(int32_t rank));

/// The stations (indices in the station list) this ionproc serves: with one ionproc per
/// input host, each rank asks every ionproc and fetches each station from its own.
RTCP_FORWARDED(servedStations, void(Out<Span<int32_t>> stations));

/// One block's correlation of a subband (index in the subband list): visibilities
/// [baseline][channel][pol] and validSamples[baseline][channel], for integration.
RTCP_FORWARDED(acceptVisibilities,
               void(int32_t subbandIndex, int64_t block, int32_t nrStations, int32_t nrChannels,
                    Span<std::complex<float>> visibilities, Span<uint32_t> validSamples));

/// The input bulk bytes of an acceptVisibilities call for nrStations x nrChannels (each
/// array padded as the codec lays it out).
constexpr uint64_t visibilityCallBytes(int nrStations, int nrChannels) {
  const uint64_t cells = uint64_t(nrStations) * uint64_t(nrStations + 1) / 2 * uint64_t(nrChannels);
  return forwarding::padded(cells * 4 * sizeof(std::complex<float>)) +
         forwarding::padded(cells * sizeof(uint32_t));
}

/// One TAB's beam-formed data of one subband-block (DESIGN §2.4b's payload, as the ranks
/// make it: BeamFormedData): samples[component][sample][channel] and
/// validFraction[sample][channel] of TAB `tab` of the subband's SAP, for storage-sink. Its
/// Stokes kind, channels and samples are the parset's for that TAB (BeamFormedSettings):
/// ionproc checks the arrays against them. One call per TAB, each array sent from the
/// rank's own buffer (no copy on the rank), each call one §2.4b block on ionproc's side.
RTCP_FORWARDED(acceptBeamFormed, void(int32_t subbandIndex, int64_t block, int32_t tab,
                                      Span<float> samples, Span<float> validFraction));

/// The input bulk bytes of an acceptBeamFormed call for a TAB of nrComponents Stokes
/// components, nrChannels channels and nrSamples samples per block (each array padded).
constexpr uint64_t beamFormedCallBytes(int nrComponents, int nrChannels, int nrSamples) {
  const uint64_t cells = uint64_t(nrChannels) * uint64_t(nrSamples);
  return forwarding::padded(uint64_t(nrComponents) * cells * sizeof(float)) +
         forwarding::padded(cells * sizeof(float));
}

}  // namespace rtcp::ion
