#pragma once
/// \file StreamLayout.h
/// A station's input streams as DESIGN §2.1 lays them out: its subbands spread over its
/// RSP.ports in order (the first stream carries the first beamletsPerPacket subbands,
/// the next stream the next ones), each stream from its own RSP board (= port index).

#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"

namespace rtcp::sim {

struct StreamLayout {
  int station = 0;          ///< index in the observation's station list
  std::string stationName;  ///< e.g. CS001
  int stationId = 0;        ///< LOFAR numeric ID (packet station field / 32)
  int port = 0;             ///< index in the station's RSP.ports, also the board number
  int firstSubband = 0;     ///< index in the observation's subband list
  int nrSubbands = 0;       ///< beamlets per packet of this stream
  std::string descriptor;   ///< the parset's RSP.ports entry ("" when absent)

  /// The recording's file name: CS001.rsp for port 0, CS001-1.rsp for port 1, ...
  std::string recordingName() const;
};

/// Every station's streams, in station order then port order. Throws std::runtime_error
/// naming the station when its RSP.ports are too few for its subbands; streams beyond
/// those the subbands need are left out.
std::vector<StreamLayout> layoutStreams(const ObservationSettings& settings);

}  // namespace rtcp::sim
