// ObservationSettings: times, instrument and beams (SettingsReaders.h).
#include <algorithm>

#include "SettingsReaders.h"
#include "rtcp/ParsetLimits.h"
#include "rtcp/SampleTime.h"

namespace rtcp::settings {
namespace {

/// The band filters LOFAR stations have, with their Nyquist zones (COBALT's nyquistZone()).
const std::vector<std::pair<std::string, int>>& bandFilters() {
  static const std::vector<std::pair<std::string, int>> filters{
      {"LBA_10_70", 1},   {"LBA_30_70", 1},   {"LBA_10_90", 1},  {"LBA_30_90", 1},
      {"HBA_110_190", 2}, {"HBA_170_230", 3}, {"HBA_210_250", 3}};
  return filters;
}

/// The direction types a beam may have: fixed on the sky, fixed on the ground, or one of
/// casacore's solar-system bodies.
const std::vector<std::string>& directionTypes() {
  static const std::vector<std::string> types{"J2000",   "AZELGEO", "SUN",    "MOON",
                                              "MERCURY", "VENUS",   "MARS",   "JUPITER",
                                              "SATURN",  "URANUS",  "NEPTUNE"};
  return types;
}

}  // namespace

bool isDirectionType(const std::string& type) {
  const auto& types = directionTypes();
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::string directionTypeList() {
  std::string text;
  for (const std::string& type : directionTypes()) text += (text.empty() ? "" : ", ") + type;
  return text;
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

void readTimes(const Parset& p, Problems& problems, ObservationSettings& s) {
  problems.guard([&] {
    const std::string idKey = p.isDefined("Observation.ObsID") || !p.isDefined("Observation.otdbID")
                                  ? "Observation.ObsID"
                                  : "Observation.otdbID";  // a SAS task specification's id
    s.observationId = p.getInt(idKey);
    if (s.observationId < 0) p.fail(idKey, "must not be negative");
  });
  problems.guard([&] {
    s.startTime = p.getTime("Observation.startTime");
    s.stopTime = p.getTime("Observation.stopTime");
    if (s.stopTime <= s.startTime)
      p.fail("Observation.stopTime", "stop time '" + formatUtc(s.stopTime) +
                                         "' is not after start time '" + formatUtc(s.startTime) +
                                         "'");
  });
}

void readInstrument(const Parset& p, Problems& problems, ObservationSettings& s) {
  problems.guard([&] {
    const int64_t clock = p.getInt("Observation.sampleClock", 200);
    if (clock != 200 && clock != 160)
      p.fail("Observation.sampleClock",
             "sample clock " + std::to_string(clock) + " MHz is not 200 or 160");
    s.clockMHz = int(clock);
  });
  problems.guard([&] {
    const int64_t bits = p.getInt("Observation.nrBitsPerSample", 16);
    if (bits != 16 && bits != 8 && bits != 4)
      p.fail("Observation.nrBitsPerSample", std::to_string(bits) + " bits is not 16, 8 or 4");
    s.bitsPerSample = int(bits);
  });
  const bool setOk = problems.guard([&] {
    const std::string set = p.getString("Observation.antennaSet");
    if (!set.starts_with("LBA_") && !set.starts_with("HBA_"))
      p.fail("Observation.antennaSet",
             "antenna set '" + set + "' starts with neither LBA_ nor HBA_");
    s.antennaSet = set;
    s.antennaField = set.substr(0, 3);
  });
  problems.guard([&] {
    s.bandFilter = p.getString("Observation.bandFilter");
    const auto& filters = bandFilters();
    const auto it = std::find_if(filters.begin(), filters.end(),
                                 [&](const auto& f) { return f.first == s.bandFilter; });
    if (it == filters.end()) {
      std::vector<std::string> names;
      for (const auto& f : filters) names.push_back(f.first);
      p.fail("Observation.bandFilter",
             "unknown band filter '" + s.bandFilter + "' (" + joined(names) + ")");
    }
    s.nyquistZone = it->second;
    if (setOk && !s.bandFilter.starts_with(s.antennaField))
      p.fail("Observation.bandFilter",
             "band filter '" + s.bandFilter + "' does not suit antenna set '" + s.antennaSet + "'");
  });
}

void readBeams(const Parset& p, Problems& problems, ObservationSettings& s) {
  int nrBeams = 1;
  if (!problems.guard([&] { nrBeams = intInRange(p, "Observation.nrBeams", 1, 1, kMaxBeams); }))
    return;
  for (int b = 0; b < nrBeams; ++b) {
    Direction direction;
    problems.guard([&] {
      direction.type = p.getString(beamKey(b, "directionType"), "J2000");
      if (!isDirectionType(direction.type))
        p.fail(beamKey(b, "directionType"),
               "direction type '" + direction.type + "' is not one of " + directionTypeList());
      // A solar-system body's position comes from the ephemeris; its angles are unused.
      const bool body = direction.type != "J2000" && direction.type != "AZELGEO";
      direction.ra =
          body ? p.getDouble(beamKey(b, "angle1"), 0) : p.getDouble(beamKey(b, "angle1"));
      direction.dec =
          body ? p.getDouble(beamKey(b, "angle2"), 0) : p.getDouble(beamKey(b, "angle2"));
    });
    s.beams.push_back(direction);
    problems.guard([&] {
      const std::string listKey = beamKey(b, "subbandList");
      const std::vector<int64_t> numbers = p.getIntVector(listKey);
      if (numbers.empty()) p.fail(listKey, "beam " + std::to_string(b) + " has no subbands");
      if (s.subbands.size() + numbers.size() > size_t(kMaxSubbands))
        p.fail(listKey, "beam " + std::to_string(b) + " brings the subbands to " +
                            std::to_string(s.subbands.size() + numbers.size()) +
                            ", more than the " + std::to_string(kMaxSubbands) +
                            " an observation may have");
      for (const int64_t number : numbers) {
        if (number < 0 || number > 511)
          p.fail(listKey, "subband " + std::to_string(number) + " is outside 0..511");
        const int index = s.nrSubbands();
        s.subbands.push_back({index, int(number), b, s.subbandFrequency(int(number))});
      }
    });
  }
}

}  // namespace rtcp::settings

namespace rtcp::settings {

void readDescription(const Parset& p, ObservationSettings& s) {
  const std::string campaign = "Observation.Campaign.";
  s.campaign.name = p.getString(campaign + "name", "");
  s.campaign.title = p.getString(campaign + "title", "");
  s.campaign.pi = p.getString(campaign + "PI", "");
  s.campaign.coInvestigators = p.getStringVector(campaign + "CO_I", {});
  s.campaign.contact = p.getString(campaign + "contact", "");
  for (size_t b = 0; b < s.beams.size(); ++b)
    s.beamTargets.push_back(p.getStringVector(beamKey(b, "target"), {}));
  const int nrAnalogBeams = intInRange(p, "Observation.nrAnaBeams", 1, 0, 1);
  const std::string analog = "Observation.AnaBeam[0].";
  if (nrAnalogBeams == 0 || !p.isDefined(analog + "angle1")) return;
  AnalogBeamSettings beam;
  beam.directionType = p.getString(analog + "directionType", "J2000");
  if (!isDirectionType(beam.directionType))
    p.fail(analog + "directionType",
           "direction type '" + beam.directionType + "' is not one of " + directionTypeList());
  beam.angle1 = p.getDouble(analog + "angle1");
  beam.angle2 = p.getDouble(analog + "angle2");
  s.analogBeam = beam;
}

void readComputeNodes(const Parset& p, ObservationSettings& s) {
  for (const std::string& name : p.getStringVector("Cobalt.Nodes", {}))
    s.computeNodes.push_back({name, p.getString("PIC.Core.Cobalt." + name + ".host", "localhost")});
}

}  // namespace rtcp::settings
