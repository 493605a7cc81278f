#include "BeamFormedChecks.h"

#include <cppunit/extensions/HelperMacros.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "TestData.h"

namespace rtcp::observe::test {

SmallObservation beamFormedObservation(const std::string& dir, int64_t obsId) {
  SmallObservation o;
  o.obsId = obsId;
  o.seconds = 2.2;
  o.steps = 12288;
  o.outputDir = dir + "/out";
  return o;
}

std::string twoTabKeys(const SmallObservation& o, const std::string& coherentLocation,
                       const std::string& incoherentLocation) {
  std::ostringstream keys;
  keys.precision(17);
  keys << "Observation.DataProducts.Output_CoherentStokes.enabled = T\n"
       << "Observation.DataProducts.Output_CoherentStokes.locations = [" << coherentLocation
       << "]\n"
       << "Observation.DataProducts.Output_IncoherentStokes.enabled = T\n"
       << "Observation.DataProducts.Output_IncoherentStokes.locations = [" << incoherentLocation
       << "]\n"
       << "Cobalt.BeamFormer.CoherentStokes.which = I\n"
       << "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16\n"
       << "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 16\n"
       << "Cobalt.BeamFormer.IncoherentStokes.which = IQUV\n"
       << "Cobalt.BeamFormer.IncoherentStokes.nrChannelsPerSubband = 16\n"
       << "Cobalt.BeamFormer.IncoherentStokes.timeIntegrationFactor = 16\n"
       << "Observation.Beam[0].nrTiedArrayBeams = 2\n"
       << "Observation.Beam[0].TiedArrayBeam[0].angle1 = " << o.beamRa << "\n"
       << "Observation.Beam[0].TiedArrayBeam[0].angle2 = " << o.beamDec << "\n"
       << "Observation.Beam[0].TiedArrayBeam[1].coherent = F\n";
  return keys.str();
}

std::string beamFormedName(int64_t obsId, int tab, int component) {
  char name[64];
  std::snprintf(name, sizeof name, "L%lld_SAP000_B%03d_S%d_P000_bf.h5", (long long)obsId, tab,
                component);
  return name;
}

std::string checkBeamFormedFiles(const std::string& directory,
                                 const std::vector<std::string>& names) {
  std::string command = "/usr/bin/python3 " + rtcp::test::sourceDir() +
                        "/observe/test/check_beamformed.py " + directory;
  for (const std::string& name : names) command += " " + name;
  const std::string out = directory + ".check.txt";
  const int status = std::system((command + " > " + out + " 2>&1").c_str());
  const std::string text = readFile(out);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(command + "\n" + text, 0, status);
  return text;
}

void checkBeamFormedSummary(const std::string& observationDir, const std::string& directory,
                            const std::vector<std::string>& names) {
  const std::string listed = summaryValue(observationDir, "beamFormedFiles");
  for (const std::string& name : names) {
    const std::string entry = "\"" + directory + "/" + name + "\"";
    const size_t at = listed.find(entry);
    CPPUNIT_ASSERT_MESSAGE(name + " not in " + listed, at != std::string::npos);
    const std::string figures = listed.substr(at, listed.find('}', at) - at);
    for (const char* expected :
         {"\"blocksExpected\": 2", "\"blocksWritten\": 2", "\"subbandBlocksLost\": 0"})
      CPPUNIT_ASSERT_MESSAGE(figures, figures.find(expected) != std::string::npos);
  }
}

}  // namespace rtcp::observe::test
