#pragma once
// Helpers of the beam-formed observation tests (observe_beamformed_test,
// observe_beamformed_hosts_test): a small observation the beam former takes, COBALT's file
// names, the files read back with h5py (check_beamformed.py) and observe's summary of them.

#include <cstdint>
#include <string>
#include <vector>

#include "ObserveTestUtil.h"

namespace rtcp::observe::test {

/// Two blocks of 12 288 spectra of 16 channels (1.007 s each) of four LBA stations on two
/// subbands (the beam former's high-resolution channels divide a block), the MSs in
/// DIR/out.
SmallObservation beamFormedObservation(const std::string& dir, int64_t obsId);

/// One of the beam former's outputs (Output_CoherentStokes or Output_IncoherentStokes, and
/// Cobalt.BeamFormer.CoherentStokes or IncoherentStokes): where its files go (HOST:DIR),
/// its Stokes components and the spectra it integrates; 16 channels.
struct StokesOutput {
  std::string location;
  std::string which = "I";
  int timeIntegration = 16;
};

/// A TAB of SAP 0: its direction (angle1 and angle2) offset from the beam's, coherent or
/// not, and its dispersion measure (0: the key is not given).
struct TabKeys {
  double raOffset = 0;
  double decOffset = 0;
  bool coherent = true;
  double dispersionMeasure = 0;
};

/// The keys of both outputs and of SAP 0's TABs.
std::string beamFormedKeys(const SmallObservation& o, const StokesOutput& coherent,
                           const StokesOutput& incoherent, const std::vector<TabKeys>& tabs);

/// The keys of two TABs of SAP 0: a coherent one at the beam's centre, dedispersed at
/// `dispersionMeasure`, and an incoherent one.
std::string twoTabKeys(const SmallObservation& o, const StokesOutput& coherent,
                       const StokesOutput& incoherent, double dispersionMeasure = 0);

/// COBALT's name of SAP 0's file of a TAB's Stokes component (part 0).
std::string beamFormedName(int64_t obsId, int tab, int component);

/// Asserts with check_beamformed.py that the directory holds exactly these beam-formed
/// files, readable in h5py with every attribute, their data not all zero and their weights
/// full; returns its output (a line per file).
std::string checkBeamFormedFiles(const std::string& directory,
                                 const std::vector<std::string>& names);

/// Asserts that observe's summary.json lists each file (as DIRECTORY/NAME, DIRECTORY
/// "host:path" for another host) with its 2 blocks expected and written and none lost.
void checkBeamFormedSummary(const std::string& observationDir, const std::string& directory,
                            const std::vector<std::string>& names);

}  // namespace rtcp::observe::test
