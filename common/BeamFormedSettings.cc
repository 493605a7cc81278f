// BeamFormedSettings: names, look-ups and the geometry COBALT derives (ring TABs, delay
// compensation channels). The keys are read in ReadBeamFormed.cc.
#include "rtcp/BeamFormedSettings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <sstream>

namespace rtcp {

std::string stokesName(StokesKind kind) {
  switch (kind) {
    case StokesKind::kI:
      return "I";
    case StokesKind::kIQUV:
      return "IQUV";
    case StokesKind::kXXYY:
      return "XXYY";
  }
  return "?";
}

std::optional<StokesKind> stokesKindOf(const std::string& which) {
  for (const StokesKind kind : {StokesKind::kI, StokesKind::kIQUV, StokesKind::kXXYY})
    if (stokesName(kind) == which) return kind;
  return std::nullopt;
}

std::vector<std::string> stokesComponents(StokesKind kind) {
  switch (kind) {
    case StokesKind::kI:
      return {"I"};
    case StokesKind::kIQUV:
      return {"I", "Q", "U", "V"};
    case StokesKind::kXXYY:
      return {"Xr", "Xi", "Yr", "Yi"};
  }
  return {};
}

int SapTabSettings::nrCoherent() const {
  return int(
      std::count_if(tabs.begin(), tabs.end(), [](const TabSettings& t) { return t.coherent; }));
}

int SapTabSettings::nrIncoherent() const { return int(tabs.size()) - nrCoherent(); }

int BeamFormedSettings::nrTabs() const {
  int n = 0;
  for (const SapTabSettings& sap : saps) n += int(sap.tabs.size());
  return n;
}

int BeamFormedSettings::fileOf(int sap, int tab, int component, int subband) const {
  if (sap < 0 || size_t(sap) >= saps.size()) return -1;
  const std::vector<TabSettings>& tabs = saps[size_t(sap)].tabs;
  if (tab < 0 || size_t(tab) >= tabs.size()) return -1;
  for (const int index : tabs[size_t(tab)].files) {
    const BeamFormedFile& file = files[size_t(index)];
    if (file.component == component && subband >= file.firstSubband &&
        subband < file.firstSubband + file.nrSubbands)
      return index;
  }
  return -1;
}

std::string BeamFormedSettings::summaryLine() const {
  std::ostringstream line;
  line << "beam-formed: " << nrTabs() << " TAB(s) in " << saps.size() << " SAP(s)"
       << (flysEye ? " (fly's eye)" : "");
  const auto describe = [&](const char* name, const StokesSettings& st) {
    line << "; " << name << " Stokes " << stokesName(st.kind) << ", " << st.nrChannels
         << " channel(s), " << st.timeIntegrationFactor << "x in time";
  };
  if (coherentEnabled) describe("coherent", coherent);
  if (incoherentEnabled) describe("incoherent", incoherent);
  line << "; " << files.size() << " file(s)";
  return line.str();
}

std::string BeamFormedSettings::defaultFilename(int64_t obsId, int sap, int tab, int component,
                                                int part) {
  char name[96];
  std::snprintf(name, sizeof name, "L%lld_SAP%03d_B%03d_S%d_P%03d_bf.h5",
                static_cast<long long>(obsId), sap, tab, component, part);
  return name;
}

std::vector<std::array<double, 2>> tabRingOffsets(int nrRings, double ringSize, double centreAngle2,
                                                  bool scaleByCosine) {
  std::vector<std::array<double, 2>> offsets;
  if (nrRings <= 0) return offsets;
  // Hexagonal cells of height ringSize: the steps along the six sides of a ring, from the
  // top clockwise.
  const double edge = ringSize / std::sqrt(3.0);
  const double dl = 1.5 * edge, dm = 0.5 * ringSize;
  const std::array<std::array<double, 2>, 6> steps{
      {{dl, -dm}, {0, -ringSize}, {-dl, -dm}, {-dl, dm}, {0, ringSize}, {dl, dm}}};
  offsets.push_back({0, 0});
  for (int ring = 1; ring <= nrRings; ++ring) {
    double l = 0, m = ringSize * ring;
    for (const auto& step : steps)
      for (int i = 0; i < ring; ++i) {
        offsets.push_back({l, m});
        l += step[0];
        m += step[1];
      }
  }
  if (scaleByCosine)
    for (auto& offset : offsets) {
      const double cosine = std::cos(centreAngle2 + offset[1]);
      if (cosine > 1e-4) offset[0] /= cosine;
    }
  return offsets;
}

int cobaltDelayCompensationChannels(double maxDistance, double maxFrequency, double clockHz) {
  const double distance = std::max(maxDistance, 400.0);
  const double frequency = std::max(maxFrequency, 10e6);
  const double subbandWidth = clockHz / 1024.0;
  const double maxPhaseChange = 0.15491933384829667540;  // rad, sqrt(24e-3)
  const double earthRotation = 7.29211585e-5;            // rad/s, sidereal
  const double speedOfLight = 299792458.0;
  const double phaseRate =
      2 * std::numbers::pi * frequency * earthRotation / speedOfLight * distance;  // rad/s
  const double maxChannels = maxPhaseChange / phaseRate * subbandWidth;
  // The largest power of two at most half way up (COBALT rounds (n + 1) / 2 up to a power).
  unsigned half = (unsigned(std::min(maxChannels, 1e9)) + 1) / 2, power = 1;
  while (power < half) power <<= 1;
  return int(std::clamp(power, 32u, 256u));
}

}  // namespace rtcp
