#include "rtcp/BeamFormedTiming.h"

#include <algorithm>
#include <cmath>

namespace rtcp {

namespace {
/// Samples of filter beyond half the smearing: the impulse response's tails (the band's
/// edges, the chirp's jumps between channels) decay as 1 / t.
constexpr int kLatencyMargin = 128;
}  // namespace

int dedispersionLatencyFor(double dispersionMeasure, double subbandWidth, double subbandFrequency,
                           int nrChannels, int multiple) {
  const double width = subbandWidth / nrChannels;
  const double low = subbandFrequency - subbandWidth / 2 - width / 2;
  const double smear = kDispersionConstant * std::abs(dispersionMeasure) *
                       (1 / (low * low) - 1 / ((low + width) * (low + width)));
  const int latency = int(std::ceil(smear * subbandWidth / 2)) + kLatencyMargin;
  multiple = std::max(multiple, 1);
  return (latency + multiple - 1) / multiple * multiple;
}

int finalFilterBankDelay(int nrChannels) {
  return nrChannels > 1 ? (kFinalFilterBankTaps - 1) * nrChannels / 2 : 0;
}

int dedispersionLatency(const ObservationSettings& settings) {
  const BeamFormedSettings& bf = settings.beamFormed;
  if (bf.flysEye) return 0;
  int latency = 0;
  for (size_t sap = 0; sap < bf.saps.size(); ++sap)
    for (const TabSettings& tab : bf.saps[sap].tabs) {
      if (!bf.dedispersed(tab)) continue;
      for (int sb : settings.subbandsOfBeam(int(sap)))
        latency =
            std::max(latency, dedispersionLatencyFor(tab.dispersionMeasure, settings.subbandWidth(),
                                                     settings.subbands[size_t(sb)].frequency,
                                                     bf.coherent.nrChannels,
                                                     int(bf.coherent.inputSamplesPerSample())));
    }
  return latency;
}

int64_t beamFormedDelay(const ObservationSettings& settings, const TabSettings& tab) {
  const BeamFormedSettings& bf = settings.beamFormed;
  const int64_t dedispersion =
      !bf.flysEye && bf.dedispersed(tab) ? dedispersionLatency(settings) : 0;
  return dedispersion + finalFilterBankDelay(bf.stokes(tab).nrChannels);
}

int64_t beamFormerLeadInBlocks(const ObservationSettings& settings) {
  const BeamFormedSettings& bf = settings.beamFormed;
  if (!bf.enabled()) return 0;
  auto history = [](const StokesSettings& stokes) {
    return stokes.nrChannels > 1 ? int64_t(kFinalFilterBankTaps - 1) * stokes.nrChannels : 0;
  };
  const bool coherent = bf.coherentEnabled || bf.flysEye;
  const int64_t filter = std::max(coherent ? history(bf.coherent) : 0,
                                  bf.incoherentEnabled ? history(bf.incoherent) : 0);
  const int64_t n = settings.samplesPerBlock();
  auto blocks = [n](int64_t samples) { return (samples + n - 1) / n; };
  return blocks(filter) + blocks(2 * int64_t(dedispersionLatency(settings)));
}

}  // namespace rtcp
