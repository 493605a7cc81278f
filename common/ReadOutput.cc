// ObservationSettings: the correlated output and the simulated sky (SettingsReaders.h).
#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include "SettingsReaders.h"

namespace rtcp::settings {
namespace {

const std::string kOutput = "Observation.DataProducts.Output_Correlated.";

void readLocations(const Parset& p, ObservationSettings& s) {
  CorrelatedOutputSettings& out = s.correlatedOutput;
  const size_t n = s.subbands.size();
  std::vector<std::string> locations = p.getStringVector(kOutput + "locations", {});
  if (locations.empty()) locations = {"localhost:."};
  if (locations.size() != 1 && locations.size() != n)
    p.fail(kOutput + "locations", std::to_string(locations.size()) + " locations for " +
                                      std::to_string(n) +
                                      " subbands (give one for all or one per subband)");
  for (size_t i = 0; i < n; ++i) {
    auto [host, directory] =
        splitLocation(p, kOutput + "locations", locations[locations.size() == 1 ? 0 : i]);
    out.hosts.push_back(std::move(host));
    out.directories.push_back(std::move(directory));
  }
}

}  // namespace

std::pair<std::string, std::string> splitLocation(const Parset& p, const std::string& key,
                                                  const std::string& location) {
  const size_t colon = location.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == location.size() ||
      location.substr(0, colon).find('/') != std::string::npos)
    p.fail(key, "bad location '" + location + "' (expected HOST:DIR)");
  return {location.substr(0, colon), location.substr(colon + 1)};
}

void readOutput(const Parset& p, Problems& problems, ObservationSettings& s) {
  CorrelatedOutputSettings& out = s.correlatedOutput;
  const size_t n = s.subbands.size();
  problems.guard([&] { out.enabled = p.getBool(kOutput + "enabled", true); });
  problems.guard([&] {
    out.filenames = p.getStringVector(kOutput + "filenames", {});
    if (out.filenames.empty())
      for (const SubbandSettings& sb : s.subbands)
        out.filenames.push_back(
            ObservationSettings::defaultFilename(s.observationId, sb.beam, sb.index));
    if (out.filenames.size() != n)
      p.fail(kOutput + "filenames", std::to_string(out.filenames.size()) + " filenames for " +
                                        std::to_string(n) + " subbands");
  });
  const bool located = problems.guard([&] { readLocations(p, s); });
  if (located && out.filenames.size() == n) {
    std::set<std::tuple<std::string, std::string, std::string>> targets;
    for (size_t i = 0; i < n; ++i)
      if (!targets.emplace(out.hosts[i], out.directories[i], out.filenames[i]).second) {
        problems.error(kOutput + "filenames", "two subbands would write " + out.hosts[i] + ":" +
                                                  out.directories[i] + "/" + out.filenames[i]);
        break;
      }
  }
  problems.guard([&] { out.storagePort = intInRange(p, "OLAP.Storage.port", 4100, 1, 65535); });
}

namespace {

/// Sim.Source[i].Q/U/V: fractions of Stokes I, each in [-1, 1], polarised at most fully.
void readPolarisation(const Parset& p, int i, SimSource& source) {
  double* fractions[] = {&source.q, &source.u, &source.v};
  const char* names[] = {"Q", "U", "V"};
  for (int k = 0; k < 3; ++k) {
    *fractions[k] = p.getDouble(sourceKey(i, names[k]), 0.0);
    if (!(std::abs(*fractions[k]) <= 1))
      p.fail(sourceKey(i, names[k]), "a fraction of Stokes I must lie in -1..1");
  }
  const double polarised =
      std::sqrt(source.q * source.q + source.u * source.u + source.v * source.v);
  if (polarised > 1 + 1e-9)
    p.fail(sourceKey(i, "Q"), "the polarised fraction sqrt(Q^2 + U^2 + V^2) of Sim.Source[" +
                                  std::to_string(i) + "] is " + std::to_string(polarised) +
                                  ", more than 1");
}

/// Sim.Source[i].pulsar.epoch: an MJD (UTC) as a number, or a UTC date 'YYYY-MM-DD
/// HH:MM:SS[.f]'; by default the observation's start.
double readEpochMjd(const Parset& p, const std::string& key, double startTime) {
  const double mjdOfUnixEpoch = 40587, secondsPerDay = 86400;
  if (!p.isDefined(key)) return startTime / secondsPerDay + mjdOfUnixEpoch;
  const std::string text = p.getString(key);
  double mjd = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), mjd);
  if (error == std::errc() && end == text.data() + text.size()) return mjd;
  return p.getTime(key) / secondsPerDay + mjdOfUnixEpoch;
}

/// Sim.Source[i].pulsar.*: a pulsar when .period is given (.width then too).
SimPulsar readPulsar(const Parset& p, int i, double startTime) {
  SimPulsar pulsar;
  const std::string period = sourceKey(i, "pulsar.period"), width = sourceKey(i, "pulsar.width");
  const std::string epoch = sourceKey(i, "pulsar.epoch"),
                    dm = sourceKey(i, "pulsar.dispersionMeasure");
  if (!p.isDefined(period)) {
    for (const std::string& key : {width, epoch, dm})
      if (p.isDefined(key)) p.fail(key, "is given without " + period);
    return pulsar;
  }
  pulsar.period = p.getDouble(period);
  if (!(pulsar.period > 0)) p.fail(period, "the pulse period must be positive (seconds)");
  pulsar.width = p.getDouble(width);
  if (!(pulsar.width > 0 && pulsar.width <= pulsar.period))
    p.fail(width, "the pulse width (FWHM, seconds) must be positive and at most the period");
  pulsar.epochMjd = readEpochMjd(p, epoch, startTime);
  pulsar.dispersionMeasure = p.getDouble(dm, 0.0);
  if (!(pulsar.dispersionMeasure >= 0))
    p.fail(dm, "the dispersion measure must not be negative (pc cm^-3)");
  return pulsar;
}

SimSource readSource(const Parset& p, int i, double startTime) {
  SimSource source;
  source.direction.type = p.getString(sourceKey(i, "directionType"), "J2000");
  if (!isDirectionType(source.direction.type))
    p.fail(sourceKey(i, "directionType"),
           "direction type '" + source.direction.type + "' is not one of " + directionTypeList());
  const bool body = source.direction.type != "J2000" && source.direction.type != "AZELGEO";
  source.direction.ra = body ? 0 : p.getDouble(sourceKey(i, "angle1"));
  source.direction.dec = body ? 0 : p.getDouble(sourceKey(i, "angle2"));
  source.flux = p.getDouble(sourceKey(i, "flux"), 1.0);
  if (source.flux < 0) p.fail(sourceKey(i, "flux"), "flux must not be negative");
  readPolarisation(p, i, source);
  source.pulsar = readPulsar(p, i, startTime);
  return source;
}

/// The true signal path of station s: Sim.<field>.*, by default its corrections.
SimSignalPath readSignalPath(const Parset& p, const StationSettings& st) {
  SimSignalPath path;
  const char* pols[] = {"X", "Y"};
  for (int pol = 0; pol < 2; ++pol) {
    const std::string delayKey = "Sim." + st.name + ".delay." + pols[pol];
    const std::string phaseKey = "Sim." + st.name + ".phase0." + pols[pol];
    path.delay[pol] = p.getDouble(delayKey, st.clockCorrection + st.delay[pol]);
    path.phase0[pol] = p.getDouble(phaseKey, st.phase0[pol]);
  }
  return path;
}

/// Sim.rfi.<name>.stations (or another list of fields) as station indices; empty: absent.
std::vector<int> readStationList(const Parset& p, const std::string& key,
                                 const ObservationSettings& s) {
  std::vector<int> indices;
  for (const std::string& name : p.getStringVector(key, {})) {
    const int index = s.stationIndex(name);
    if (index < 0) p.fail(key, "'" + name + "' is no antenna field of the observation");
    indices.push_back(index);
  }
  return indices;
}

void readRfi(const Parset& p, Problems& problems, const ObservationSettings& s, SimRfi& rfi) {
  problems.guard([&] {
    rfi.toneFrequency = p.getDouble("Sim.rfi.tone.frequency", 0.0);
    rfi.toneAmplitude = p.getDouble("Sim.rfi.tone.amplitude", 0.0);
    rfi.toneStations = readStationList(p, "Sim.rfi.tone.stations", s);
  });
  problems.guard([&] {
    rfi.burstPeriod = p.getDouble("Sim.rfi.burst.period", 0.0);
    rfi.burstDuration = p.getDouble("Sim.rfi.burst.duration", 0.0);
    rfi.burstPower = p.getDouble("Sim.rfi.burst.power", 0.0);
    if (rfi.burstPeriod < 0) p.fail("Sim.rfi.burst.period", "must not be negative");
    if (rfi.burstDuration < 0 || (rfi.burstPeriod > 0 && rfi.burstDuration > rfi.burstPeriod))
      p.fail("Sim.rfi.burst.duration", "must lie in 0..Sim.rfi.burst.period");
    if (rfi.burstPower < 0) p.fail("Sim.rfi.burst.power", "must not be negative");
    rfi.burstStations = readStationList(p, "Sim.rfi.burst.stations", s);
  });
  problems.guard([&] { rfi.silentStations = readStationList(p, "Sim.rfi.silentStations", s); });
  problems.guard([&] {
    rfi.driftFrequency = p.getDouble("Sim.rfi.drift.frequency", 0.0);
    rfi.driftRate = p.getDouble("Sim.rfi.drift.rate", 0.0);
    rfi.driftPeriod = p.getDouble("Sim.rfi.drift.period", 0.0);
    rfi.driftAmplitude = p.getDouble("Sim.rfi.drift.amplitude", 0.0);
    if (rfi.driftFrequency < 0) p.fail("Sim.rfi.drift.frequency", "must not be negative");
    if (rfi.driftFrequency > 0 && !(rfi.driftPeriod > 0))
      p.fail("Sim.rfi.drift.period", "must be positive with Sim.rfi.drift.frequency");
    rfi.driftStations = readStationList(p, "Sim.rfi.drift.stations", s);
  });
  problems.guard(
      [&] { rfi.noiseOnlyStations = readStationList(p, "Sim.rfi.noiseOnlyStations", s); });
}

}  // namespace

void readSim(const Parset& p, Problems& problems, ObservationSettings& s) {
  SimSettings& sim = s.sim;
  int nrSources = 0;
  problems.guard([&] { nrSources = intInRange(p, "Sim.nrSources", 0, 0, 100'000); });
  for (int i = 0; i < nrSources; ++i)
    problems.guard([&] { sim.sources.push_back(readSource(p, i, s.startTime)); });
  problems.guard([&] {
    sim.noisePower = p.getDouble("Sim.noisePower", 1.0);
    if (sim.noisePower < 0) p.fail("Sim.noisePower", "noise power must not be negative");
  });
  problems.guard([&] {
    sim.toneFrequency = p.getDouble("Sim.tone.frequency", 0.0);
    sim.toneAmplitude = p.getDouble("Sim.tone.amplitude", 0.0);
  });
  problems.guard([&] {
    sim.packetLossProbability = p.getDouble("Sim.packetLossProbability", 0.0);
    if (sim.packetLossProbability < 0 || sim.packetLossProbability > 1)
      p.fail("Sim.packetLossProbability", "probability must lie in 0..1");
  });
  problems.guard([&] {
    sim.stationBeamWidth = p.getDouble("Sim.stationBeamWidth", 0.0);
    if (sim.stationBeamWidth < 0) p.fail("Sim.stationBeamWidth", "must not be negative");
  });
  problems.guard([&] {
    const int64_t seed = p.getInt("Sim.seed", 1);
    if (seed < 0) p.fail("Sim.seed", "seed must not be negative");
    sim.seed = uint64_t(seed);
  });
  for (const StationSettings& st : s.stations)
    problems.guard([&] { sim.signalPaths.push_back(readSignalPath(p, st)); });
  readRfi(p, problems, s, sim.rfi);
}

}  // namespace rtcp::settings
