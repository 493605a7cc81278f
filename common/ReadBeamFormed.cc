// ObservationSettings: beam-formed outputs (SettingsReaders.h, BeamFormedSettings.h), from
// both generations of keys. COBALT's win; a BG/P key that says otherwise is a warning.
//
// TAB angles: COBALT (RTCP/Cobalt/CoInterface/src/Parset.cc) takes
// TiedArrayBeam[t].angle1/angle2 as absolute; from January to June 2014 it took
// absoluteAngle1/absoluteAngle2 when given, and angle1/angle2 as offsets from the beam
// centre otherwise; BG/P (RTCP/IONProc Delays.cc) added angle1/angle2 (and OLAP.Pencil[t])
// to the beam centre. rtcp reads absoluteAngle1/2 when given and not both zero (later SAS
// specifications carry 0, 0 there as a placeholder), angle1/2 as offsets in a parset without
// any Cobalt.* key (BG/P's generation), and as absolute angles otherwise.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <tuple>

#include "SettingsReaders.h"

namespace rtcp::settings {
namespace {

/// The keys of one kind of beam-formed output.
struct OutputKind {
  std::string product;  ///< CoherentStokes or IncoherentStokes
  bool coherent;
  std::string cobalt() const { return "Cobalt.BeamFormer." + product + "."; }
  std::string bgp() const { return "OLAP.CNProc_" + product + "."; }
  std::string output(const std::string& name) const {
    return "Observation.DataProducts.Output_" + product + "." + name;
  }
};

const OutputKind kCoherent{"CoherentStokes", true};
const OutputKind kIncoherent{"IncoherentStokes", false};

const std::string kFlysEyeKeys[] = {"Cobalt.BeamFormer.flysEye", "OLAP.PencilInfo.flysEye"};
const std::string kHighResolution = "Cobalt.BeamFormer.nrHighResolutionChannels";
const std::string kDelayChannels = "Cobalt.BeamFormer.nrDelayCompensationChannels";
constexpr int kMaxRings = 20;  // 1261 TABs

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

std::optional<Given<bool>> firstBool(const Parset& p, Problems& problems,
                                     const std::vector<std::string>& keys) {
  return firstOf<bool>(
      p, problems, keys, [&](const std::string& key) { return p.getBool(key); },
      [](bool a, bool b) { return a == b; });
}

std::optional<Given<double>> firstDouble(const Parset& p, Problems& problems,
                                         const std::vector<std::string>& keys) {
  return firstOf<double>(
      p, problems, keys, [&](const std::string& key) { return p.getDouble(key); },
      [](double a, double b) { return a == b; });
}

/// The key that sets the block size, for messages about it.
std::string blockSizeKey(const Parset& p, const std::string& fallback) {
  for (const char* key : {"Cobalt.blockSize", "OLAP.CNProc.integrationSteps"})
    if (p.isDefined(key)) return key;
  return fallback;
}

void readWhich(const Parset& p, Problems& problems, const OutputKind& kind, StokesSettings& st) {
  const auto which = firstOf<std::string>(
      p, problems, {kind.cobalt() + "which", kind.bgp() + "which", "OLAP.Stokes.which"},
      [&](const std::string& key) { return p.getString(key); },
      [](const std::string& a, const std::string& b) { return a == b; });
  if (!which) return;  // I
  const auto stokes = stokesKindOf(which->value);
  if (!stokes) p.fail(which->key, "'" + which->value + "' is not I, IQUV or XXYY");
  if (!kind.coherent && *stokes == StokesKind::kXXYY)
    p.fail(which->key,
           "incoherent Stokes cannot be XXYY: the stations' voltages do not add incoherently "
           "(I or IQUV)");
  st.kind = *stokes;
}

void readChannels(const Parset& p, Problems& problems, const OutputKind& kind,
                  const ObservationSettings& s, StokesSettings& st) {
  const auto channels =
      firstInt(p, problems,
               {kind.cobalt() + "nrChannelsPerSubband", kind.bgp() + "channelsPerSubband",
                "OLAP.Stokes.channelsPerSubband"},
               0, 65536);
  if (!channels) return;  // 1
  if (channels->value == 0) {
    problems.warn(channels->key, "0 channels: taken as the correlator's " +
                                     std::to_string(s.channelsPerSubband) +
                                     ", as BG/P did (COBALT refuses 0)");
    st.nrChannels = s.channelsPerSubband;
    return;
  }
  if (!isPowerOfTwo(channels->value))
    p.fail(channels->key, std::to_string(channels->value) + " is not a power of two");
  st.nrChannels = int(channels->value);
}

void readIntegration(const Parset& p, Problems& problems, const OutputKind& kind,
                     const ObservationSettings& s, StokesSettings& st) {
  const auto factor =
      firstInt(p, problems,
               {kind.cobalt() + "timeIntegrationFactor", kind.bgp() + "timeIntegrationFactor",
                "OLAP.Stokes.integrationSteps"},
               1, 1'000'000);
  if (factor) st.timeIntegrationFactor = int(factor->value);
  const int64_t block = s.samplesPerBlock();
  if (block % st.inputSamplesPerSample() != 0)
    p.fail(blockSizeKey(p, factor ? factor->key : kind.cobalt() + "timeIntegrationFactor"),
           "a block of " + std::to_string(block) + " samples is not a whole number of " +
               kind.product + " samples (" + std::to_string(st.nrChannels) + " channels x " +
               std::to_string(st.timeIntegrationFactor) + " integrated = " +
               std::to_string(st.inputSamplesPerSample()) + " subband samples each)");
}

StokesSettings readStokes(const Parset& p, Problems& problems, const OutputKind& kind,
                          const ObservationSettings& s) {
  StokesSettings st;
  problems.guard([&] { readWhich(p, problems, kind, st); });
  const bool channelsOk = problems.guard([&] { readChannels(p, problems, kind, s, st); });
  if (channelsOk) problems.guard([&] { readIntegration(p, problems, kind, s, st); });
  problems.guard([&] {
    const auto perFile =
        firstInt(p, problems, {kind.cobalt() + "subbandsPerFile", kind.bgp() + "subbandsPerFile"},
                 0, 1'000'000);
    if (perFile) st.subbandsPerFile = int(perFile->value);
  });
  return st;
}

/// The largest distance of an antenna field from the reference position, metres.
double maxDistanceToReference(const ObservationSettings& s) {
  double distance = 0;
  for (const StationSettings& st : s.stations) {
    double d2 = 0;
    for (int i = 0; i < 3; ++i)
      d2 += (st.position[i] - s.referencePhaseCenter[i]) *
            (st.position[i] - s.referencePhaseCenter[i]);
    distance = std::max(distance, std::sqrt(d2));
  }
  return distance;
}

void readChannelisation(const Parset& p, Problems& problems, const ObservationSettings& s,
                        BeamFormedSettings& bf) {
  problems.guard([&] {
    const int64_t block = s.samplesPerBlock();
    if (!p.isDefined(kHighResolution)) {
      // COBALT's 4096, or the largest power of two below that makes whole spectra of a
      // block (BG/P's blocks, 720 x 64 samples, are no multiple of 4096).
      while (block % bf.nrHighResolutionChannels != 0) bf.nrHighResolutionChannels /= 2;
      return;
    }
    bf.nrHighResolutionChannels = intInRange(p, kHighResolution, 4096, 1, 32768);
    if (!isPowerOfTwo(bf.nrHighResolutionChannels))
      p.fail(kHighResolution,
             std::to_string(bf.nrHighResolutionChannels) + " is not a power of two");
    if (block % bf.nrHighResolutionChannels != 0)
      p.fail(kHighResolution, "a block of " + std::to_string(block) +
                                  " samples is not a whole number of spectra of " +
                                  std::to_string(bf.nrHighResolutionChannels) +
                                  " channels (the beam former's high resolution)");
  });
  problems.guard([&] {
    double maxFrequency = 0;
    for (const SubbandSettings& sb : s.subbands)
      maxFrequency = std::max(maxFrequency, sb.frequency + s.subbandWidth() / 2);
    const int derived =
        cobaltDelayCompensationChannels(maxDistanceToReference(s), maxFrequency, s.clockHz());
    bf.nrDelayCompensationChannels = intInRange(p, kDelayChannels, derived, 1, 32768);
    if (!isPowerOfTwo(bf.nrDelayCompensationChannels))
      p.fail(kDelayChannels,
             std::to_string(bf.nrDelayCompensationChannels) + " is not a power of two");
    // As COBALT: never more than the high resolution.
    bf.nrDelayCompensationChannels =
        std::min(bf.nrDelayCompensationChannels, bf.nrHighResolutionChannels);
  });
}

/// The generation of the TAB angles (see the top of this file).
bool anglesAreOffsets(const Parset& p) { return p.keysWithPrefix("Cobalt.").empty(); }

std::string tabKey(const std::string& prefix, const std::string& name) { return prefix + name; }

/// A manual TAB (Observation.Beam[b].TiedArrayBeam[t]. or BG/P's OLAP.Pencil[t].).
TabSettings readManualTab(const Parset& p, const std::string& prefix, const Direction& centre,
                          bool offsets) {
  TabSettings tab;
  tab.coherent = p.getBool(tabKey(prefix, "coherent"), true);
  tab.dispersionMeasure =
      p.getDouble(tabKey(prefix, "dispersionMeasure"), p.getDouble("OLAP.dispersionMeasure", 0));
  if (tab.dispersionMeasure < 0 || !std::isfinite(tab.dispersionMeasure))
    p.fail(tabKey(prefix, "dispersionMeasure"), "must be a finite number, not negative");
  if (!p.getStringVector(tabKey(prefix, "stationList"), {}).empty())
    p.fail(tabKey(prefix, "stationList"),
           "a TAB of its own stations is not supported (every station of the observation "
           "forms every TAB)");
  tab.direction = centre;
  const std::string type = p.getString(tabKey(prefix, "directionType"), centre.type);
  if (!isDirectionType(type))
    p.fail(tabKey(prefix, "directionType"),
           "direction type '" + type + "' is not one of " + directionTypeList());
  const double angle1 = p.getDouble(tabKey(prefix, "angle1"), 0);
  const double angle2 = p.getDouble(tabKey(prefix, "angle2"), 0);
  const double absolute1 = p.getDouble(tabKey(prefix, "absoluteAngle1"), 0);
  const double absolute2 = p.getDouble(tabKey(prefix, "absoluteAngle2"), 0);
  if (!tab.coherent) return tab;  // at the beam centre by definition (as COBALT)
  tab.direction.type = type;
  if (absolute1 != 0 || absolute2 != 0) {
    tab.direction.ra = absolute1;
    tab.direction.dec = absolute2;
  } else if (offsets) {
    if (type != centre.type)
      p.fail(tabKey(prefix, "directionType"),
             "'" + type + "' differs from the beam's '" + centre.type +
                 "': angle1/angle2 are offsets from the beam centre here (BG/P's keys)");
    tab.direction.ra = centre.ra + angle1;
    tab.direction.dec = centre.dec + angle2;
  } else {
    tab.direction.ra = p.getDouble(tabKey(prefix, "angle1"));
    tab.direction.dec = p.getDouble(tabKey(prefix, "angle2"));
  }
  return tab;
}

/// Observation.Beam[b].nrTabRings / tabRingSize (BG/P: OLAP.PencilInfo.nrRings / ringSize).
void readRings(const Parset& p, Problems& problems, int b, const Direction& centre,
               SapTabSettings& sap) {
  const auto rings =
      firstInt(p, problems, {beamKey(b, "nrTabRings"), "OLAP.PencilInfo.nrRings"}, 0, kMaxRings);
  if (!rings || rings->value == 0) return;
  const auto size =
      firstDouble(p, problems, {beamKey(b, "tabRingSize"), "OLAP.PencilInfo.ringSize"});
  const std::string sizeKey = size ? size->key : beamKey(b, "tabRingSize");
  if (!size || !(size->value > 0))
    p.fail(sizeKey, std::to_string(rings->value) + " TAB rings need a ring size above 0 (radians)");
  if (rings->value * size->value >= std::numbers::pi / 2)
    p.fail(sizeKey, std::to_string(rings->value) + " rings of " + formatNumber(size->value) +
                        " rad reach more than 90 degrees from the beam centre (the size is in "
                        "radians)");
  if (centre.type != "J2000" && centre.type != "AZELGEO")
    p.fail(rings->key, "TAB rings need a J2000 or AZELGEO beam, not " + centre.type);
  sap.nrRings = int(rings->value);
  sap.ringSize = size->value;
  const std::string dmKey =
      "Cobalt.Observation.Beam[" + std::to_string(b) + "].tabRingDispersionMeasure";
  sap.ringDispersionMeasure = p.getDouble(dmKey, 0);
  if (sap.ringDispersionMeasure < 0) p.fail(dmKey, "must not be negative");
  for (const auto& offset :
       tabRingOffsets(sap.nrRings, sap.ringSize, centre.dec, centre.type == "J2000")) {
    TabSettings tab;
    tab.direction = centre;
    tab.direction.ra += offset[0];
    tab.direction.dec += offset[1];
    tab.dispersionMeasure = sap.ringDispersionMeasure;
    tab.origin = TabOrigin::kRing;
    sap.tabs.push_back(tab);
  }
}

SapTabSettings readSapTabs(const Parset& p, Problems& problems, const ObservationSettings& s, int b,
                           bool flysEye, const std::string& flysEyeKey) {
  SapTabSettings sap;
  const Direction& centre = s.beams[size_t(b)];
  // BG/P's OLAP.nrPencils / OLAP.Pencil[t] gave every beam the same TABs.
  const bool pencils =
      !p.isDefined(beamKey(b, "nrTiedArrayBeams")) && p.isDefined("OLAP.nrPencils");
  problems.guard([&] {
    sap.nrManualTabs = pencils ? intInRange(p, "OLAP.nrPencils", 0, 0, 10'000)
                               : intInRange(p, beamKey(b, "nrTiedArrayBeams"), 0, 0, 10'000);
  });
  if (flysEye) {
    if (sap.nrManualTabs > 0)
      problems.warn(flysEyeKey, "fly's eye makes one TAB per antenna field: the " +
                                    std::to_string(sap.nrManualTabs) + " TAB(s) of beam " +
                                    std::to_string(b) + " are not made (as COBALT)");
    sap.nrManualTabs = 0;
    for (int st = 0; st < s.nrStations(); ++st) {
      TabSettings tab;
      tab.direction = centre;
      tab.origin = TabOrigin::kFlysEye;
      tab.station = st;
      sap.tabs.push_back(tab);
    }
    return sap;
  }
  const bool offsets = anglesAreOffsets(p);
  for (int t = 0; t < sap.nrManualTabs; ++t) {
    const std::string prefix = pencils ? "OLAP.Pencil[" + std::to_string(t) + "]."
                                       : beamKey(b, "TiedArrayBeam[" + std::to_string(t) + "].");
    problems.guard([&] { sap.tabs.push_back(readManualTab(p, prefix, centre, offsets)); });
  }
  problems.guard([&] { readRings(p, problems, b, centre, sap); });
  return sap;
}

/// The key that asked for a TAB, for messages.
std::string tabOriginKey(const SapTabSettings& sap, int b, size_t t,
                         const std::string& flysEyeKey) {
  switch (sap.tabs[t].origin) {
    case TabOrigin::kManual:
      return beamKey(size_t(b), "TiedArrayBeam[" + std::to_string(t) + "].coherent");
    case TabOrigin::kRing:
      return beamKey(size_t(b), "nrTabRings");
    case TabOrigin::kFlysEye:
      return flysEyeKey;
  }
  return {};
}

/// Each TAB's kind of output must be enabled (COBALT fails on it too: no file location).
/// True when it is.
bool checkTabKinds(Problems& problems, const BeamFormedSettings& bf,
                   const std::string& flysEyeKey) {
  bool ok = true;
  for (size_t b = 0; b < bf.saps.size(); ++b)
    for (size_t t = 0; t < bf.saps[b].tabs.size(); ++t) {
      const bool coherent = bf.saps[b].tabs[t].coherent;
      if (coherent ? bf.coherentEnabled : bf.incoherentEnabled) continue;
      ok = false;
      const OutputKind& kind = coherent ? kCoherent : kIncoherent;
      problems.error(tabOriginKey(bf.saps[b], int(b), t, flysEyeKey),
                     std::string("TAB ") + std::to_string(t) + " of beam " + std::to_string(b) +
                         " is " + (coherent ? "coherent" : "incoherent") + ", but " +
                         kind.output("enabled") + " is not set");
    }
  return ok;
}

/// The file names and locations of one kind: given (one per file), or COBALT's defaults.
struct Targets {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> locations;  ///< [file] host, directory
};

Targets readTargets(const Parset& p, const OutputKind& kind, size_t nrFiles, int64_t obsId,
                    const std::vector<BeamFormedFile>& files) {
  Targets targets;
  targets.names = p.getStringVector(kind.output("filenames"), {});
  if (targets.names.empty())
    for (const BeamFormedFile& f : files)
      if (f.coherent == kind.coherent)
        targets.names.push_back(
            BeamFormedSettings::defaultFilename(obsId, f.sap, f.tab, f.component, f.part));
  if (targets.names.size() != nrFiles)
    p.fail(kind.output("filenames"), std::to_string(targets.names.size()) + " filenames for " +
                                         std::to_string(nrFiles) + " " + kind.product +
                                         " files (one per TAB, Stokes component and part)");
  std::vector<std::string> locations = p.getStringVector(kind.output("locations"), {});
  if (locations.empty()) locations = {"localhost:."};
  if (locations.size() != 1 && locations.size() != nrFiles)
    p.fail(kind.output("locations"), std::to_string(locations.size()) + " locations for " +
                                         std::to_string(nrFiles) + " " + kind.product +
                                         " files (give one for all or one per file)");
  for (size_t i = 0; i < nrFiles; ++i)
    targets.locations.push_back(
        splitLocation(p, kind.output("locations"), locations[locations.size() == 1 ? 0 : i]));
  return targets;
}

/// The files in COBALT's order (SAP, TAB, component, part), without names and places.
std::vector<BeamFormedFile> listFiles(const ObservationSettings& s, BeamFormedSettings& bf) {
  std::vector<BeamFormedFile> files;
  for (size_t b = 0; b < bf.saps.size(); ++b) {
    const std::vector<int> subbands = s.subbandsOfBeam(int(b));
    const int nrSubbands = int(subbands.size());
    if (nrSubbands == 0) continue;  // no files: a beam without subbands is an error of its own
    for (size_t t = 0; t < bf.saps[b].tabs.size(); ++t) {
      TabSettings& tab = bf.saps[b].tabs[t];
      const StokesSettings& st = bf.stokes(tab);
      const int perFile = st.subbandsPerFileOf(nrSubbands);
      const int nrParts = std::max(1, (nrSubbands + perFile - 1) / perFile);
      tab.files.clear();
      for (int component = 0; component < st.nrComponents(); ++component)
        for (int part = 0; part < nrParts; ++part) {
          BeamFormedFile file;
          file.sap = int(b);
          file.tab = int(t);
          file.component = component;
          file.part = part;
          file.coherent = tab.coherent;
          file.firstSubband = subbands.front() + part * perFile;
          file.nrSubbands = std::min(perFile, nrSubbands - part * perFile);
          tab.files.push_back(int(files.size()));
          files.push_back(file);
        }
    }
  }
  return files;
}

void readFiles(const Parset& p, Problems& problems, const ObservationSettings& s,
               BeamFormedSettings& bf) {
  std::vector<BeamFormedFile> files = listFiles(s, bf);
  bool placed = true;
  for (const OutputKind* kind : {&kCoherent, &kIncoherent}) {
    if (!(kind->coherent ? bf.coherentEnabled : bf.incoherentEnabled)) continue;
    const size_t count =
        size_t(std::count_if(files.begin(), files.end(), [&](const BeamFormedFile& f) {
          return f.coherent == kind->coherent;
        }));
    if (count == 0) {
      problems.warn(kind->output("enabled"),
                    "no " + std::string(kind->coherent ? "coherent" : "incoherent") +
                        " TAB asks for it: it makes no file");
      continue;
    }
    placed = problems.guard([&] {
      const Targets targets = readTargets(p, *kind, count, s.observationId, files);
      size_t i = 0;
      for (BeamFormedFile& f : files)
        if (f.coherent == kind->coherent) {
          f.filename = targets.names[i];
          std::tie(f.host, f.directory) = targets.locations[i];
          ++i;
        }
    }) && placed;
  }
  if (!placed) return;
  std::set<std::tuple<std::string, std::string, std::string>> written;
  const CorrelatedOutputSettings& corr = s.correlatedOutput;
  if (corr.enabled)
    for (size_t i = 0; i < corr.filenames.size() && i < corr.hosts.size(); ++i)
      written.emplace(corr.hosts[i], corr.directories[i], corr.filenames[i]);
  for (const BeamFormedFile& f : files) {
    std::string raw = f.filename;
    if (raw.ends_with(".h5")) raw.resize(raw.size() - 3);
    const bool fresh = written.emplace(f.host, f.directory, f.filename).second &&
                       written.emplace(f.host, f.directory, raw + ".raw").second &&
                       written.emplace(f.host, f.directory, raw + ".weight.raw").second;
    if (!fresh) {
      problems.error((f.coherent ? kCoherent : kIncoherent).output("filenames"),
                     "two files would write " + f.host + ":" + f.directory + "/" + f.filename);
      return;
    }
  }
  bf.files = std::move(files);
}

}  // namespace

void readBeamFormed(const Parset& p, Problems& problems, ObservationSettings& s) {
  BeamFormedSettings& bf = s.beamFormed;
  problems.guard([&] {
    if (p.getBool("Observation.DataProducts.Output_Beamformed.enabled", false))
      p.fail("Observation.DataProducts.Output_Beamformed.enabled",
             "BG/P's complex-voltage product: ask for it as Output_CoherentStokes with "
             "Cobalt.BeamFormer.CoherentStokes.which = XXYY");
  });
  problems.guard([&] { bf.coherentEnabled = p.getBool(kCoherent.output("enabled"), false); });
  problems.guard([&] { bf.incoherentEnabled = p.getBool(kIncoherent.output("enabled"), false); });
  problems.guard([&] {
    const int leadIn = intInRange(p, kLeadInBlocksKey, 0, 0, kMaxLeadInBlocks);
    if (leadIn > 0 && !bf.enabled())
      problems.warn(kLeadInBlocksKey, "no beam-formed output whose state it would build: ignored");
    else
      bf.leadInBlocks = leadIn;
  });
  if (!bf.enabled()) return;

  std::string flysEyeKey = kFlysEyeKeys[0];
  problems.guard([&] {
    const auto flysEye = firstBool(p, problems, {kFlysEyeKeys[0], kFlysEyeKeys[1]});
    if (flysEye) bf.flysEye = flysEye->value, flysEyeKey = flysEye->key;
  });
  problems.guard([&] {
    const auto dedisperse = firstBool(
        p, problems,
        {"Cobalt.BeamFormer.coherentDedisperseChannels", "OLAP.coherentDedisperseChannels"});
    if (dedisperse) bf.coherentDedispersion = dedisperse->value;
  });
  readChannelisation(p, problems, s, bf);
  if (bf.coherentEnabled) bf.coherent = readStokes(p, problems, kCoherent, s);
  if (bf.incoherentEnabled) bf.incoherent = readStokes(p, problems, kIncoherent, s);

  for (size_t b = 0; b < s.beams.size(); ++b)
    bf.saps.push_back(readSapTabs(p, problems, s, int(b), bf.flysEye, flysEyeKey));
  if (bf.nrTabs() == 0) {
    problems.error(bf.coherentEnabled ? kCoherent.output("enabled") : kIncoherent.output("enabled"),
                   "no tied-array beam asked for (Observation.Beam[b].nrTiedArrayBeams, "
                   "nrTabRings or Cobalt.BeamFormer.flysEye)");
    return;
  }
  if (checkTabKinds(problems, bf, flysEyeKey)) readFiles(p, problems, s, bf);
}

}  // namespace rtcp::settings
