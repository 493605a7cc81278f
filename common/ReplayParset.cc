#include "rtcp/ReplayParset.h"

#include <stdexcept>
#include <vector>

#include "SettingsReaders.h"
#include "rtcp/Integrations.h"
#include "rtcp/SampleTime.h"

namespace rtcp {

std::string utcOfSample(int clockMHz, int64_t sample) {
  const SampleClock clock(clockMHz);
  for (const double before : {0.0, 1e-6, 2e-6, 3e-6}) {
    const std::string text = formatUtc(clock.unixTime(sample) - before);
    if (clock.firstSampleAtOrAfter(parseUtc(text)) == sample) return text;
  }
  throw std::logic_error("no UTC text for sample " + std::to_string(sample));
}

Parset replayParset(const Parset& observed, const ObservationSettings& s,
                    const std::string& recordingDirectory, const std::string& outputDirectory,
                    std::optional<BlockWindow> window) {
  Parset p = observed;
  for (const StationSettings& st : s.stations) {
    std::vector<std::string> ports;
    for (size_t k = 0; k < st.inputs.size(); ++k)
      ports.push_back("file:" + recordingDirectory + "/" + st.name + "-" + std::to_string(k) +
                      ".rsp");
    std::string list = "[";
    for (const std::string& port : ports) list += (list.size() > 1 ? ", " : "") + port;
    p.set(settings::fieldKey(st.name, "RSP.ports"), list + "]");
  }
  p.set("Cobalt.realTime", "F");
  if (p.isDefined("OLAP.realTime")) p.set("OLAP.realTime", "F");
  const std::string here = "[localhost:" + settings::quoted(outputDirectory) + "]";
  p.set("Observation.DataProducts.Output_Correlated.locations", here);
  // The beam-formed files too (the same names, never over the live observation's).
  if (s.beamFormed.coherentEnabled)
    p.set("Observation.DataProducts.Output_CoherentStokes.locations", here);
  if (s.beamFormed.incoherentEnabled)
    p.set("Observation.DataProducts.Output_IncoherentStokes.locations", here);
  if (p.isDefined("Rtcp.recordInput.directory")) p.set("Rtcp.recordInput.directory", "''");
  if (window) {
    if (window->firstBlock < 0 || window->nrBlocks <= 0 ||
        window->firstBlock + window->nrBlocks > s.nrBlocks() || window->leadInBlocks < 0 ||
        window->leadInBlocks > window->firstBlock - firstProcessedBlock(s))
      throw std::invalid_argument("replay of blocks [" + std::to_string(window->firstBlock) +
                                  ", +" + std::to_string(window->nrBlocks) +
                                  ") after a lead-in of " + std::to_string(window->leadInBlocks) +
                                  " outside the observation's " + std::to_string(s.nrBlocks()) +
                                  " (from block " + std::to_string(firstProcessedBlock(s)) +
                                  " on)");
    if (s.beamFormed.enabled())
      p.set(kLeadInBlocksKey, std::to_string(window->leadInBlocks));
    else if (window->leadInBlocks > 0)
      throw std::invalid_argument("a lead-in for an observation without beam-formed output");
    const SampleClock clock(s.clockMHz);
    const int64_t first = s.blockStartSample(window->firstBlock);
    const std::string start = utcOfSample(s.clockMHz, first);
    // Half a sample past the last block's end: floor() in nrBlocks() keeps exactly these.
    const double stop = parseUtc(start) +
                        (double(window->nrBlocks * s.samplesPerBlock()) + 0.5) / clock.sampleRate();
    p.set("Observation.startTime", "'" + start + "'");
    p.set("Observation.stopTime", "'" + formatUtc(stop) + "'");
  }
  return p;
}

}  // namespace rtcp
