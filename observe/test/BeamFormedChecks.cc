#include "BeamFormedChecks.h"

#include <cppunit/extensions/HelperMacros.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

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

std::string beamFormedKeys(const SmallObservation& o, const StokesOutput& coherent,
                           const StokesOutput& incoherent, const std::vector<TabKeys>& tabs) {
  std::ostringstream keys;
  keys.precision(17);
  for (const auto& [name, output] :
       {std::pair{"Coherent", &coherent}, std::pair{"Incoherent", &incoherent}})
    keys << "Observation.DataProducts.Output_" << name << "Stokes.enabled = T\n"
         << "Observation.DataProducts.Output_" << name << "Stokes.locations = [" << output->location
         << "]\n"
         << "Cobalt.BeamFormer." << name << "Stokes.which = " << output->which << "\n"
         << "Cobalt.BeamFormer." << name << "Stokes.nrChannelsPerSubband = 16\n"
         << "Cobalt.BeamFormer." << name
         << "Stokes.timeIntegrationFactor = " << output->timeIntegration << "\n";
  keys << "Observation.Beam[0].nrTiedArrayBeams = " << tabs.size() << "\n";
  for (size_t t = 0; t < tabs.size(); ++t) {
    const std::string tab = "Observation.Beam[0].TiedArrayBeam[" + std::to_string(t) + "].";
    keys << tab << "angle1 = " << o.beamRa + tabs[t].raOffset << "\n"
         << tab << "angle2 = " << o.beamDec + tabs[t].decOffset << "\n";
    if (!tabs[t].coherent) keys << tab << "coherent = F\n";
    if (tabs[t].dispersionMeasure != 0)
      keys << tab << "dispersionMeasure = " << tabs[t].dispersionMeasure << "\n";
  }
  return keys.str();
}

std::string twoTabKeys(const SmallObservation& o, const StokesOutput& coherent,
                       const StokesOutput& incoherent, double dispersionMeasure) {
  return beamFormedKeys(o, coherent, incoherent,
                        {{.dispersionMeasure = dispersionMeasure}, {.coherent = false}});
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
