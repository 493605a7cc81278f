#include "ObserveTestUtil.h"

#include <cppunit/TestAssert.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "TestData.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::test {

int freeUdpPort() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("no free UDP port");
  close(fd);
  return ntohs(address.sin_port);
}

double raTransitingNow() {
  // Local sidereal time at the core (6.87 degrees east) from the GMST formula of the
  // Astronomical Almanac; seconds of accuracy are plenty for choosing a high beam.
  const double unixNow = double(std::time(nullptr));
  const double julianDate = unixNow / 86400.0 + 2440587.5;
  const double gmstDegrees = 280.46061837 + 360.98564736629 * (julianDate - 2451545.0);
  const double lstDegrees = std::fmod(gmstDegrees + 6.87, 360.0);
  return (lstDegrees < 0 ? lstDegrees + 360 : lstDegrees) * kDegree;
}

std::string makeParset(const SmallObservation& o) {
  std::ostringstream p;
  p << "Observation.ObsID = " << o.obsId << "\n"
    << "Observation.startTime = '" << o.start << "'\n"
    << "Observation.stopTime = '" << formatUtc(parseUtc(o.start) + o.seconds) << "'\n"
    << "Observation.antennaSet = LBA_OUTER\nObservation.bandFilter = LBA_30_90\n"
    << "Observation.VirtualInstrument.stationList = [";
  for (size_t i = 0; i < o.stations.size(); ++i) p << (i ? ", " : "") << o.stations[i];
  p << "]\nObservation.channelsPerSubband = " << o.channels << "\n"
    << "Observation.nrBeams = 1\n"
    << "Observation.Beam[0].angle1 = " << o.beamRa << "\nObservation.Beam[0].angle2 = " << o.beamDec
    << "\n"
    << "Observation.Beam[0].subbandList = " << o.subbands << "\n"
    << "Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]\n";
  for (size_t i = 0; i < o.stations.size(); ++i)
    p << "PIC.Core." << o.stations[i] << "LBA.RSP.ports = ["
      << (i < o.inputs.size() ? o.inputs[i] : "udp:127.0.0.1:" + std::to_string(freeUdpPort()))
      << "]\n";
  p.precision(17);
  p << "OLAP.CNProc.integrationSteps = " << o.steps
    << "\nOLAP.IONProc.integrationSteps = " << o.blocksPerIntegration << "\n"
    << "OLAP.realTime = " << (o.realTime ? "T" : "F") << "\n"
    << "OLAP.delayCompensation = " << (o.delayCompensation ? "T" : "F") << "\n"
    << "Observation.DataProducts.Output_Correlated.locations = [" << o.outputHost << ":"
    << o.outputDir << "]\n"
    << "Sim.nrSources = 1\nSim.Source[0].angle1 = " << o.sourceRa
    << "\nSim.Source[0].angle2 = " << o.sourceDec << "\nSim.Source[0].flux = " << o.flux
    << "\nSim.noisePower = 1.0\nSim.seed = 3\n"
    << o.extra;
  return p.str();
}

std::string writeParset(const std::string& path, const SmallObservation& o) {
  std::ofstream file(path);
  file << makeParset(o);
  if (!file) throw std::runtime_error("cannot write " + path);
  return path;
}

std::string executable(const std::string& part) { return rtcp::test::binaryDir() + "/" + part; }

std::vector<std::string> observeCommand(const std::vector<std::string>& arguments) {
  std::vector<std::string> command{executable("observe/observe")};
  command.insert(command.end(), arguments.begin(), arguments.end());
  return command;
}

std::string summaryValue(const std::string& directory, const std::string& key) {
  const std::string out = directory + "/summary-value.txt";
  const std::string command =
      "/usr/bin/python3 -c 'import json,sys; "
      "print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' " +
      directory + "/summary.json " + key + " > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::string value = readFile(out);
  if (status != 0) throw std::runtime_error("summary.json: " + value);
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

std::string observeSuccessfully(const std::string& parset, const std::string& observationDir,
                                const std::vector<std::string>& arguments,
                                const std::string& logPath) {
  std::vector<std::string> command{parset, "--dir", observationDir};
  command.insert(command.end(), arguments.begin(), arguments.end());
  const int code = runProgram(observeCommand(command), logPath);
  const std::string log = readFile(logPath);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(log, 0, code);
  // "degraded" says packets came late or were lost (a loaded machine in real time): the
  // observation itself succeeded; tests of the data check the data.
  const std::string status = summaryValue(observationDir, "status");
  CPPUNIT_ASSERT_MESSAGE(status + "\n" + log, status == "\"ok\"" || status == "\"degraded\"");
  CPPUNIT_ASSERT_EQUAL_MESSAGE(log, std::string("0"),
                               summaryValue(observationDir, "integrationsDropped"));
  return log;
}

}  // namespace rtcp::observe::test
