#include "ObservationPlan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "LocalHost.h"
#include "ParsetChecker.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

const std::string kStationList = "Observation.VirtualInstrument.stationList";
const std::string kLocations = "Observation.DataProducts.Output_Correlated.locations";

/// A string as a parset value: quoted when the syntax would read it otherwise.
std::string quoted(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_of(" \t,[]#'\"*=") == std::string::npos &&
                     text.find("..") == std::string::npos;
  return plain ? text : "'" + text + "'";
}

std::string formatVector(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + quoted(items[i]);
  return text + "]";
}

std::string absolute(const std::string& path) { return fs::weakly_canonical(fs::absolute(path)).string(); }

/// Settings of a parset, without logging its unknown keys again.
ObservationSettings quietSettings(const Parset& parset) {
  const LogLevel level = Logger::level();
  Logger::setLevel(LogLevel::kError);
  try {
    ObservationSettings settings = ObservationSettings::fromParset(parset);
    Logger::setLevel(level);
    return settings;
  } catch (...) {
    Logger::setLevel(level);
    throw;
  }
}

std::string portsKey(const StationSettings& station) { return "PIC.Core." + station.name + station.field + ".RSP.ports"; }

/// Recordings with absolute paths; true when some input is udp:.
bool absoluteInputs(const ObservationSettings& s, Parset& p) {
  const std::string parsetPath = p.name();
  bool live = false;
  for (const StationSettings& station : s.stations) {
    std::vector<std::string> inputs;
    for (const std::string& input : station.inputs) {
      const StreamDescriptor d = StreamDescriptor::parse(input);
      live = live || d.kind == StreamDescriptor::Kind::kUdp;
      inputs.push_back(d.kind == StreamDescriptor::Kind::kFile ? "file:" + absolute(recordingPath(parsetPath, d.path)) : input);
    }
    if (inputs != station.inputs) p.set(portsKey(station), formatVector(inputs));
  }
  return live;
}

/// Local output directories made absolute (one location per subband).
void absoluteOutputs(const ObservationSettings& s, Parset& p) {
  const CorrelatedOutputSettings& out = s.correlatedOutput;
  std::vector<std::string> locations;
  for (size_t i = 0; i < out.hosts.size(); ++i)
    locations.push_back(out.hosts[i] + ":" + (isLocalHost(out.hosts[i]) ? absolute(out.directories[i]) : out.directories[i]));
  p.set(kLocations, formatVector(locations));
}

/// Stations whose inputs are all udp: to this host: the ones station-sim plays here.
std::vector<std::string> locallySimulated(const ObservationSettings& s) {
  std::vector<std::string> names;
  for (const StationSettings& station : s.stations) {
    bool local = !station.inputs.empty();
    for (const std::string& input : station.inputs) {
      const StreamDescriptor d = StreamDescriptor::parse(input);
      local = local && d.kind == StreamDescriptor::Kind::kUdp && isLocalHost(d.host);
    }
    if (local) names.push_back(station.name);
  }
  return names;
}

/// The stations grouped by the host of their first input (recordings: ""), one ionproc
/// per group; each group gets a free link port.
std::vector<IonprocPlan> ionprocsByInputHost(const ObservationSettings& s) {
  std::vector<IonprocPlan> ionprocs;
  for (const StationSettings& station : s.stations) {
    const StreamDescriptor d = StreamDescriptor::parse(station.inputs.at(0));
    const std::string host = d.kind == StreamDescriptor::Kind::kUdp ? d.host : "";
    auto it = std::find_if(ionprocs.begin(), ionprocs.end(), [&](const IonprocPlan& i) { return i.inputHost == host; });
    if (it == ionprocs.end()) {
      std::string name = "ionproc";  // then ionproc-2, ionproc-3, ...
      if (!ionprocs.empty()) name.append(1, '-').append(std::to_string(ionprocs.size() + 1));
      it = ionprocs.insert(ionprocs.end(), IonprocPlan{name, host, {}, ObservationPlan::freePort()});
    }
    it->stations.push_back(station.name);
  }
  return ionprocs;
}

}  // namespace

double ObservationPlan::evenShift(double startTime, double wallTime, double margin) {
  return 2 * std::ceil((wallTime + margin - startTime) / 2);
}

uint16_t ObservationPlan::freePort() {
  TcpListener probe("127.0.0.1", 0);
  return probe.port();
}

ObservationPlan ObservationPlan::make(const Parset& original, const PlanOptions& options) {
  ObservationPlan plan;
  const ObservationSettings given = quietSettings(original);
  Parset& p = plan.parset = original;
  plan.liveInput = absoluteInputs(given, p);
  absoluteOutputs(given, p);
  if (options.now && plan.liveInput) {
    plan.timeShift = evenShift(given.startTime, options.wallTime, options.setupMargin);
    p.set("Observation.startTime", quoted(formatUtc(given.startTime + plan.timeShift)));
    p.set("Observation.stopTime", quoted(formatUtc(given.stopTime + plan.timeShift)));
    plan.notes.push_back("--now: start and stop shifted by " + std::to_string(int64_t(plan.timeShift)) + " s");
  } else if (options.now) {
    plan.notes.push_back("--now ignored: recordings replay at their own times");
  }
  plan.storagePort = freePort();
  p.set("OLAP.Storage.port", std::to_string(plan.storagePort));
  plan.settings = quietSettings(p);
  plan.ionprocs = ionprocsByInputHost(plan.settings);

  const CorrelatedOutputSettings& out = plan.settings.correlatedOutput;
  plan.directory = absolute(options.directory.empty() ? out.directories.at(0) : options.directory);
  plan.parsetPath = plan.directory + "/observation.parset";
  if (out.enabled)
    for (size_t i = 0; i < out.filenames.size(); ++i)
      if (isLocalHost(out.hosts[i])) plan.measurementSets.push_back(out.directories[i] + "/" + out.filenames[i]);

  const std::vector<std::string> simulated = locallySimulated(plan.settings);
  if (simulated.size() == plan.settings.stations.size()) {
    plan.stationSimParsetPath = plan.parsetPath;
  } else if (!simulated.empty()) {
    plan.stationSimParset = p;
    plan.stationSimParset.set(kStationList, formatVector(simulated));
    plan.stationSimParset.set("OLAP.tiedArrayStationNames", "[]");
    plan.stationSimParsetPath = plan.directory + "/station-sim.parset";
  }
  return plan;
}

void ObservationPlan::write() const {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw std::runtime_error("cannot create the observation directory " + directory + ": " + error.message());
  auto writeParset = [](const std::string& path, const Parset& parset) {
    std::ofstream file(path);
    file << "# effective parset written by observe (from " << parset.name() << ")\n" << parset.toString();
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path);
  };
  writeParset(parsetPath, parset);
  if (!stationSimParsetPath.empty() && stationSimParsetPath != parsetPath)
    writeParset(stationSimParsetPath, stationSimParset);
}

}  // namespace rtcp::observe
