#pragma once
/// \file BeamFormedSettings.h
/// Beam-formed observations (tied-array beams, TABs), parsed once from a parset into typed
/// fields (DESIGN §2.7): what ObservationSettings::beamFormed holds. Both generations of
/// LOFAR's keys are read (common/ReadBeamFormed.cc): COBALT's `Cobalt.BeamFormer.*` and
/// `Observation.Beam[b].TiedArrayBeam[t].*`, BG/P's `OLAP.CNProc_CoherentStokes.*`,
/// `OLAP.CNProc_IncoherentStokes.*`, `OLAP.Stokes.*`, `OLAP.PencilInfo.*`, `OLAP.Pencil[t].*`;
/// COBALT's win, a BG/P key that disagrees is a warning.
///
/// The TABs of a SAP are listed in COBALT's order: the manual TABs
/// (Observation.Beam[b].TiedArrayBeam[t]), then the rings around the beam centre
/// (nrTabRings, tabRingSize); or, with fly's eye, one TAB per antenna field. The files are
/// listed in COBALT's order too (SAP, TAB, Stokes component, part), each holding
/// `subbandsPerFile` consecutive subbands of its SAP (the last part may hold fewer).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rtcp/BeamFormedBlock.h"
#include "rtcp/Direction.h"

namespace rtcp {

/// The beam former's lead-in (BeamFormedSettings::leadInBlocks), and its bound (a dump's
/// needs a few blocks: beamFormerLeadInBlocks() in rtcp/BeamFormedTiming.h).
constexpr const char* kLeadInBlocksKey = "Rtcp.beamFormer.leadInBlocks";
constexpr int kMaxLeadInBlocks = 10000;

/// "I", "IQUV" or "XXYY" (Cobalt.BeamFormer.*.which).
std::string stokesName(StokesKind kind);
/// The StokesKind a `which` value names; nothing for an unknown name.
std::optional<StokesKind> stokesKindOf(const std::string& which);
/// The names of the components, as COBALT writes STOKES_COMPONENTS: I; I Q U V; Xr Xi Yr Yi.
std::vector<std::string> stokesComponents(StokesKind kind);

/// What one kind of beam-formed output makes: coherent (Cobalt.BeamFormer.CoherentStokes.*)
/// or incoherent (Cobalt.BeamFormer.IncoherentStokes.*).
struct StokesSettings {
  StokesKind kind = StokesKind::kI;  ///< which: I, IQUV or XXYY (coherent only)
  int nrChannels = 1;                ///< nrChannelsPerSubband: output channels per subband
  int timeIntegrationFactor = 1;     ///< timeIntegrationFactor: output samples added
  int subbandsPerFile = 0;           ///< subbandsPerFile as given; 0: all of a SAP's subbands

  int nrComponents() const { return nrStokesComponents(kind); }
  /// Subband samples behind one output sample: nrChannels × timeIntegrationFactor.
  int64_t inputSamplesPerSample() const { return int64_t(nrChannels) * timeIntegrationFactor; }
  /// Output samples per block of `samplesPerBlock` subband samples.
  int outputSamplesPerBlock(int64_t samplesPerBlock) const {
    return int(samplesPerBlock / inputSamplesPerSample());
  }
  /// Subbands in one file of a SAP of `sapSubbands` subbands (subbandsPerFile, 0 = all).
  int subbandsPerFileOf(int sapSubbands) const {
    return subbandsPerFile == 0 || subbandsPerFile > sapSubbands ? sapSubbands : subbandsPerFile;
  }
  bool operator==(const StokesSettings&) const = default;
};

/// Where a TAB comes from.
enum class TabOrigin : uint8_t {
  kManual,   ///< Observation.Beam[b].TiedArrayBeam[t] (BG/P: OLAP.Pencil[t])
  kRing,     ///< a TAB of the rings around the beam centre (nrTabRings, tabRingSize)
  kFlysEye,  ///< one antenna field's own beam (Cobalt.BeamFormer.flysEye)
};

/// One tied-array beam of a SAP.
struct TabSettings {
  /// Absolute direction. COBALT's angle1/angle2 are absolute; BG/P's were offsets from the
  /// beam centre (added here); incoherent and fly's-eye TABs point at the beam centre.
  Direction direction;
  bool coherent = true;          ///< TiedArrayBeam[t].coherent (default true)
  double dispersionMeasure = 0;  ///< TiedArrayBeam[t].dispersionMeasure, pc cm^-3
  TabOrigin origin = TabOrigin::kManual;
  int station = -1;  ///< fly's eye: the antenna field (index in ObservationSettings::stations)
  /// [component × nrParts + part]: indices in BeamFormedSettings::files.
  std::vector<int> files;
  bool operator==(const TabSettings&) const = default;
};

/// The TABs of one SAP (Observation.Beam[b]).
struct SapTabSettings {
  int nrManualTabs = 0;              ///< nrTiedArrayBeams (BG/P: OLAP.nrPencils); 0 with fly's eye
  int nrRings = 0;                   ///< nrTabRings (BG/P: OLAP.PencilInfo.nrRings)
  double ringSize = 0;               ///< tabRingSize, radians (BG/P: OLAP.PencilInfo.ringSize)
  double ringDispersionMeasure = 0;  ///< Cobalt.Observation.Beam[b].tabRingDispersionMeasure
  std::vector<TabSettings> tabs;     ///< manual TABs, then the rings; or fly's eye's
  int nrCoherent() const;
  int nrIncoherent() const;
  bool operator==(const SapTabSettings&) const = default;
};

/// One beam-formed file: one TAB's Stokes component over a part of its SAP's subbands.
struct BeamFormedFile {
  int sap = 0;
  int tab = 0;
  int component = 0;     ///< Stokes component (0 for I; 0..3 for IQUV and XXYY)
  int part = 0;          ///< part of the SAP's subbands (subbandsPerFile each)
  bool coherent = true;  ///< coherent (Output_CoherentStokes) or incoherent output
  int firstSubband = 0;  ///< index in the observation's subband list
  int nrSubbands = 0;
  std::string filename;   ///< the HDF5 file; its samples go to the same name with .raw
  std::string host;       ///< Output_*Stokes.locations HOST:DIR
  std::string directory;  ///< Output_*Stokes.locations HOST:DIR
  bool operator==(const BeamFormedFile&) const = default;
};

struct BeamFormedSettings {
  bool coherentEnabled = false;    ///< Observation.DataProducts.Output_CoherentStokes.enabled
  bool incoherentEnabled = false;  ///< Observation.DataProducts.Output_IncoherentStokes.enabled
  StokesSettings coherent;         ///< Cobalt.BeamFormer.CoherentStokes.*
  StokesSettings incoherent;       ///< Cobalt.BeamFormer.IncoherentStokes.*
  bool flysEye = false;            ///< Cobalt.BeamFormer.flysEye (OLAP.PencilInfo.flysEye)
  /// Cobalt.BeamFormer.coherentDedisperseChannels (OLAP.coherentDedisperseChannels)
  bool coherentDedispersion = true;
  /// Cobalt.BeamFormer.nrDelayCompensationChannels; by default as COBALT derives it from
  /// the longest baseline to the reference and the highest frequency (32..256)
  int nrDelayCompensationChannels = 0;
  /// Cobalt.BeamFormer.nrHighResolutionChannels; by default COBALT's 4096, or the largest
  /// power of two below it of which a block holds whole spectra
  int nrHighResolutionChannels = 4096;
  std::vector<SapTabSettings> saps;   ///< [sap]; empty when nothing beam-formed is made
  std::vector<BeamFormedFile> files;  ///< COBALT's order: SAP, TAB, component, part
  /// Rtcp.beamFormer.leadInBlocks (rtcp's own key; a dump's dump.parset sets it): blocks
  /// before the start that the compute ranks run through the beam former, writing nothing,
  /// so that its state at block 0 (the final filter banks' histories, the dedispersion's
  /// overlap) is the one a beam former that ran through them has; blocks -leadInBlocks .. -1
  /// (firstProcessedBlock(), rtcp/Integrations.h). 0: the state starts afresh at block 0.
  int leadInBlocks = 0;

  bool enabled() const { return coherentEnabled || incoherentEnabled; }
  /// The Stokes settings of a coherent or an incoherent TAB.
  const StokesSettings& stokes(bool coherentTab) const {
    return coherentTab ? coherent : incoherent;
  }
  const StokesSettings& stokes(const TabSettings& tab) const { return stokes(tab.coherent); }
  /// Whether a TAB is coherently dedispersed: coherent, a non-zero DM, and
  /// coherentDedispersion on.
  bool dedispersed(const TabSettings& tab) const {
    return coherentDedispersion && tab.coherent && tab.dispersionMeasure != 0;
  }
  int nrTabs() const;
  /// The file holding `component` of subband `subband` (index in the observation's list) of
  /// TAB `tab` of SAP `sap`; -1 when there is none.
  int fileOf(int sap, int tab, int component, int subband) const;
  /// One line: TABs, Stokes, channels, integration and files.
  std::string summaryLine() const;
  /// COBALT's default file name: L<obsId>_SAP<nnn>_B<nnn>_S<n>_P<nnn>_bf.h5.
  static std::string defaultFilename(int64_t obsId, int sap, int tab, int component, int part);
  bool operator==(const BeamFormedSettings&) const = default;
};

/// Offsets (angle1, angle2) in radians from the beam centre of the TABs of `nrRings`
/// hexagonal rings `ringSize` apart, as COBALT's RingCoordinates makes them: the centre
/// first, then each ring from the top clockwise (1 + 3 n (n + 1) TABs); with
/// `scaleByCosine` (a J2000 beam) each angle1 offset is divided by cos(angle2) of the TAB
/// (COBALT's stop-gap for the missing projection).
std::vector<std::array<double, 2>> tabRingOffsets(int nrRings, double ringSize, double centreAngle2,
                                                  bool scaleByCosine);

/// Channels per subband for the beam former's delay compensation, as COBALT derives them
/// (Parset::calcNrDelayCompensationChannels): phase change of at most 0.155 rad within a
/// channel's sample time, from the largest distance of a field to the reference
/// (`maxDistance`, m, at least 400) and the highest sky frequency (Hz, at least 10 MHz);
/// a power of two within 32..256.
int cobaltDelayCompensationChannels(double maxDistance, double maxFrequency, double clockHz);

}  // namespace rtcp
