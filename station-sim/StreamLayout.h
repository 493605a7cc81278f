#pragma once
/// \file StreamLayout.h
/// A station's input streams as the parset lays them out (DESIGN §2.1): each subband on the
/// stream and beamlet that Observation.Dataslots.<field>.* / Observation.Beam[b].beamletList
/// give, else spread over the RSP.ports in order (the first stream carries the first
/// beamletsPerPacket subbands, the next stream the next ones); each stream from its own
/// RSP board (= port index).

#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"

namespace rtcp::sim {

struct StreamLayout {
  int station = 0;          ///< index in the observation's station list
  std::string stationName;  ///< the antenna field, e.g. CS001LBA
  int stationId = 0;        ///< LOFAR numeric ID (packet station field / 32)
  int port = 0;             ///< index in the station's RSP.ports, also the board number
  /// [beamlet]: the subband (index in the observation's list) it carries, -1 for none.
  std::vector<int> beamletSubbands;
  std::string descriptor;  ///< the parset's RSP.ports entry ("" when absent)

  int nrBeamlets() const { return int(beamletSubbands.size()); }
  /// The recording's file name: CS001LBA.rsp for port 0, CS001LBA-1.rsp for port 1, ...
  std::string recordingName() const;
};

/// Every station's streams that carry subbands, in station order then port order.
/// Throws std::runtime_error naming the station when its RSP.ports are too few for its
/// subbands; streams that carry none are left out.
std::vector<StreamLayout> layoutStreams(const ObservationSettings& settings);

}  // namespace rtcp::sim
