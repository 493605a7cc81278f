// libFuzzer target: RSP packets as a recording (file:) through the station input: the
// receiver's record splitting and packet validation, the plausibility of their times,
// the circular buffer, and every block of the observation served from it. The
// observation is IE613's capture (parsets/ie613.parset) cut to 4 subbands; the seeds are
// its packets cut to 4 beamlets. Checked: no crash, no undefined behaviour, no hang (a
// gap in a recording once deadlocked writer and reader), and every served block's
// flags add up.
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "FuzzCommon.h"
#include "StationInput.h"
#include "rtcp/ObservationSettings.h"

namespace {

std::string recordingPath() {
  static const std::string path = "/tmp/rtcp-fuzz-station-input-" + std::to_string(getpid());
  return path;
}

const rtcp::ObservationSettings& settings() {
  static const rtcp::ObservationSettings s = rtcp::ObservationSettings::fromText(
      "Observation.ObsID = 613\n"
      "Observation.startTime = '2022-06-29 01:30:00'\n"
      "Observation.stopTime = '2022-06-29 01:30:00.006'\n"
      "Observation.sampleClock = 200\n"
      "Observation.nrBitsPerSample = 8\n"
      "Observation.antennaSet = HBA_JOINED\n"
      "Observation.bandFilter = HBA_110_190\n"
      "Observation.VirtualInstrument.stationList = [IE613]\n"
      "Observation.channelsPerSubband = 16\n"
      "Observation.nrBeams = 1\n"
      "Observation.Beam[0].directionType = J2000\n"
      "Observation.Beam[0].angle1 = 5.530512067257031\n"
      "Observation.Beam[0].angle2 = 0.45553093477052004\n"
      "Observation.Beam[0].subbandList = [12..15]\n"
      "PIC.Core.IE613HBA.RSP.ports = [file:" +
          recordingPath() +
          "]\n"
          "OLAP.CNProc.integrationSteps = 16\n"
          "OLAP.IONProc.integrationSteps = 1\n"
          "OLAP.delayCompensation = F\n"
          "OLAP.realTime = F\n"
          "OLAP.nrSecondsOfBuffer = 0.01\n"
          "Observation.DataProducts.Output_Correlated.enabled = F\n",
      "fuzz-station-input.parset", "/");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rtcp::fuzz::quietLogs();
  settings();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtcp;
  {
    std::ofstream file(recordingPath(), std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  const ObservationSettings& s = settings();
  ion::StationInput input(s);
  input.start();
  StationBlock block;
  for (int64_t b = 0; b < s.nrBlocks(); ++b) {
    input.serveInto(block, b, 0, 0, s.nrSubbands());
    int64_t valid = 0;
    for (uint64_t word : block.valid) valid += std::popcount(word);
    if (valid > int64_t(block.header.nrSubbands) * block.header.nrSamples) __builtin_trap();
  }
  const ion::StationStatistics st = input.statistics().at(0);
  // Every record read is rejected, stored, late or duplicated: nothing vanishes.
  if (st.packetsAccepted + st.rejectedTotal() > st.packetsReceived) __builtin_trap();
  if (st.samplesFlagged > st.samplesServed) __builtin_trap();
  input.stop();
  return 0;
}
