// ObservationSettings::toParset's beam-formed keys (SettingsReaders.h): COBALT's
// generation, TAB angles absolute, so that reading them back gives the same TABs and files.
#include "SettingsReaders.h"

namespace rtcp::settings {
namespace {

void writeStokes(const std::string& product, const StokesSettings& st, Parset& p) {
  const std::string prefix = "Cobalt.BeamFormer." + product + ".";
  p.set(prefix + "which", stokesName(st.kind));
  p.set(prefix + "nrChannelsPerSubband", std::to_string(st.nrChannels));
  p.set(prefix + "timeIntegrationFactor", std::to_string(st.timeIntegrationFactor));
  p.set(prefix + "subbandsPerFile", std::to_string(st.subbandsPerFile));
}

void writeTargets(const std::string& product, bool coherent, const BeamFormedSettings& bf,
                  Parset& p) {
  std::vector<std::string> names, locations;
  for (const BeamFormedFile& f : bf.files)
    if (f.coherent == coherent) {
      names.push_back(f.filename);
      locations.push_back(f.host + ":" + f.directory);
    }
  const std::string prefix = "Observation.DataProducts.Output_" + product + ".";
  p.set(prefix + "filenames", formatStrings(names));
  p.set(prefix + "locations", formatStrings(locations));
}

void writeTabs(size_t b, const SapTabSettings& sap, Parset& p) {
  p.set(beamKey(b, "nrTiedArrayBeams"), std::to_string(sap.nrManualTabs));
  p.set(beamKey(b, "nrTabRings"), std::to_string(sap.nrRings));
  p.set(beamKey(b, "tabRingSize"), formatNumber(sap.ringSize));
  if (sap.nrRings > 0)
    p.set("Cobalt.Observation.Beam[" + std::to_string(b) + "].tabRingDispersionMeasure",
          formatNumber(sap.ringDispersionMeasure));
  for (size_t t = 0; t < sap.tabs.size(); ++t) {
    const TabSettings& tab = sap.tabs[t];
    if (tab.origin != TabOrigin::kManual) continue;
    const std::string prefix = "TiedArrayBeam[" + std::to_string(t) + "].";
    p.set(beamKey(b, prefix + "directionType"), tab.direction.type);
    p.set(beamKey(b, prefix + "angle1"), formatNumber(tab.direction.ra));
    p.set(beamKey(b, prefix + "angle2"), formatNumber(tab.direction.dec));
    p.set(beamKey(b, prefix + "coherent"), formatBool(tab.coherent));
    p.set(beamKey(b, prefix + "dispersionMeasure"), formatNumber(tab.dispersionMeasure));
  }
}

}  // namespace

void writeBeamFormed(const ObservationSettings& s, Parset& p) {
  const BeamFormedSettings& bf = s.beamFormed;
  p.set("Observation.DataProducts.Output_CoherentStokes.enabled", formatBool(bf.coherentEnabled));
  p.set("Observation.DataProducts.Output_IncoherentStokes.enabled",
        formatBool(bf.incoherentEnabled));
  if (!bf.enabled()) return;
  if (bf.coherentEnabled) writeStokes("CoherentStokes", bf.coherent, p);
  if (bf.incoherentEnabled) writeStokes("IncoherentStokes", bf.incoherent, p);
  p.set("Cobalt.BeamFormer.flysEye", formatBool(bf.flysEye));
  p.set("Cobalt.BeamFormer.coherentDedisperseChannels", formatBool(bf.coherentDedispersion));
  p.set("Cobalt.BeamFormer.nrHighResolutionChannels", std::to_string(bf.nrHighResolutionChannels));
  p.set("Cobalt.BeamFormer.nrDelayCompensationChannels",
        std::to_string(bf.nrDelayCompensationChannels));
  for (size_t b = 0; b < bf.saps.size(); ++b) writeTabs(b, bf.saps[b], p);
  if (bf.leadInBlocks > 0) p.set(kLeadInBlocksKey, std::to_string(bf.leadInBlocks));
  if (bf.coherentEnabled) writeTargets("CoherentStokes", true, bf, p);
  if (bf.incoherentEnabled) writeTargets("IncoherentStokes", false, bf, p);
}

}  // namespace rtcp::settings
