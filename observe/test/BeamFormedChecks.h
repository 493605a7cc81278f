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

/// The keys of two TABs of SAP 0: a coherent one of Stokes I at the beam's centre (its
/// files at coherentLocation, HOST:DIR) and an incoherent one of IQUV (incoherentLocation),
/// 16 channels, 16 spectra integrated.
std::string twoTabKeys(const SmallObservation& o, const std::string& coherentLocation,
                       const std::string& incoherentLocation);

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
