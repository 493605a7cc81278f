#include "ObservationPlan.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "LocalHost.h"
#include "ParsetChecker.h"
#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StationBufferSize.h"
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

std::string absolute(const std::string& path) {
  return fs::weakly_canonical(fs::absolute(path)).string();
}

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

std::string portsKey(const StationSettings& station) {
  return "PIC.Core." + station.name + ".RSP.ports";
}

/// Recordings with absolute paths; true when some input is udp:.
bool absoluteInputs(const ObservationSettings& s, Parset& p) {
  const std::string parsetPath = p.name();
  bool live = false;
  for (const StationSettings& station : s.stations) {
    std::vector<std::string> inputs;
    for (const std::string& input : station.inputs) {
      const StreamDescriptor d = StreamDescriptor::parse(input);
      live = live || d.kind == StreamDescriptor::Kind::kUdp;
      inputs.push_back(d.kind == StreamDescriptor::Kind::kFile
                           ? "file:" + absolute(recordingPath(parsetPath, d.path))
                           : input);
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
    locations.push_back(
        out.hosts[i] + ":" +
        (isLocalHost(out.hosts[i]) ? absolute(out.directories[i]) : out.directories[i]));
  p.set(kLocations, formatVector(locations));
  // The beam-formed files' locations alike, one per file as the settings place them.
  const BeamFormedSettings& bf = s.beamFormed;
  for (const bool coherent : {true, false}) {
    if (!(coherent ? bf.coherentEnabled : bf.incoherentEnabled)) continue;
    std::vector<std::string> files;
    for (const BeamFormedFile& f : bf.files)
      if (f.coherent == coherent)
        files.push_back(f.host + ":" + (isLocalHost(f.host) ? absolute(f.directory) : f.directory));
    if (!files.empty())
      p.set(std::string("Observation.DataProducts.Output_") +
                (coherent ? "CoherentStokes" : "IncoherentStokes") + ".locations",
            formatVector(files));
  }
}

/// Stations whose inputs are all udp: to the host (this host: any of its names), the ones
/// a station-sim there plays.
std::vector<std::string> simulatedOn(const ObservationSettings& s, const std::string& host) {
  std::vector<std::string> names;
  for (const StationSettings& station : s.stations) {
    bool on = !station.inputs.empty();
    for (const std::string& input : station.inputs) {
      const StreamDescriptor d = StreamDescriptor::parse(input);
      on = on && d.kind == StreamDescriptor::Kind::kUdp &&
           (host.empty() ? isLocalHost(d.host) : d.host == host);
    }
    if (on) names.push_back(station.name);
  }
  return names;
}

/// The parset for a station-sim that plays some of the stations.
Parset parsetOfStations(const Parset& p, const std::vector<std::string>& stations) {
  Parset sim = p;
  sim.set(kStationList, formatVector(stations));
  sim.set("OLAP.tiedArrayStationNames", "[]");
  return sim;
}

/// Hydra's -hosts list for one rank per compute node, consecutive nodes of a host merged
/// ("cbt001:2,cbt002:2").
std::string hostsOfNodes(const std::vector<ComputeNode>& nodes) {
  std::vector<std::pair<std::string, int>> hosts;
  for (const ComputeNode& node : nodes)
    if (!hosts.empty() && hosts.back().first == node.host)
      ++hosts.back().second;
    else
      hosts.emplace_back(node.host, 1);
  std::string list;
  for (const auto& [host, ranks] : hosts)
    list += (list.empty() ? "" : ",") + host + ":" + std::to_string(ranks);
  return list;
}

/// The stations grouped by the host of their first input (recordings: ""), one ionproc
/// per group; each on this host gets a free link port, each on another host linkPort.
std::vector<IonprocPlan> ionprocsByInputHost(const ObservationSettings& s, uint16_t linkPort) {
  std::vector<IonprocPlan> ionprocs;
  for (const StationSettings& station : s.stations) {
    const StreamDescriptor d = StreamDescriptor::parse(station.inputs.at(0));
    const std::string host = d.kind == StreamDescriptor::Kind::kUdp ? d.host : "";
    auto it = std::find_if(ionprocs.begin(), ionprocs.end(),
                           [&](const IonprocPlan& i) { return i.inputHost == host; });
    if (it == ionprocs.end()) {
      std::string name = "ionproc";  // then ionproc-2, ionproc-3, ...
      if (!ionprocs.empty()) name.append(1, '-').append(std::to_string(ionprocs.size() + 1));
      const bool remote = !host.empty() && !isLocalHost(host);
      it = ionprocs.insert(
          ionprocs.end(),
          IonprocPlan{name, host, {}, remote ? linkPort : ObservationPlan::freePort(), remote});
    }
    it->stations.push_back(station.name);
  }
  return ionprocs;
}

}  // namespace

bool ObservationPlan::acrossHosts() const {
  return !remoteStorageSinks.empty() || !computeHosts.empty() ||
         std::any_of(ionprocs.begin(), ionprocs.end(),
                     [](const IonprocPlan& i) { return i.remote; });
}

double ObservationPlan::evenShift(double startTime, double wallTime, double margin) {
  return 2 * std::ceil((wallTime + margin - startTime) / 2);
}

double ObservationPlan::bufferFaultSeconds(const ObservationSettings& s) {
  // 0.2 GB/s is the slowest measured: a paravirtualised guest compacting memory for huge
  // pages with GBs of recordings in its page cache took 8.6 s for 1.5 GB. A 4 s margin let
  // such a live observation (16 stations, 24 subbands) start while ionproc was still
  // faulting: 364 000 packets lost, 33 blocks served flagged.
  constexpr double kFaultBytesPerSecond = 0.2e9;
  double bytes = 0;  // what the station input allocates (StationBufferSize.h)
  for (int index = 0; index < s.nrStations(); ++index) bytes += stationBufferBytes(s, index);
  return bytes / kFaultBytesPerSecond;
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
    const double faulting = bufferFaultSeconds(given);
    plan.timeShift = evenShift(given.startTime, options.wallTime, options.setupMargin + faulting);
    p.set("Observation.startTime", quoted(formatUtc(given.startTime + plan.timeShift)));
    p.set("Observation.stopTime", quoted(formatUtc(given.stopTime + plan.timeShift)));
    plan.notes.push_back(
        "--now: start and stop shifted by " + std::to_string(int64_t(plan.timeShift)) +
        " s (set-up margin " + std::to_string(int(std::ceil(options.setupMargin + faulting))) +
        " s, of which " + std::to_string(int(std::ceil(faulting))) + " s for ionproc's buffers)");
  } else if (options.now) {
    plan.notes.push_back("--now ignored: recordings replay at their own times");
  }
  // Storage-sinks on other hosts listen on the parset's port (DESIGN 2.2, default 4100),
  // which their firewalls let through; one on this host alone on any free port.
  const CorrelatedOutputSettings& givenOutput = given.correlatedOutput;
  const std::vector<BeamFormedFile>& givenFiles = given.beamFormed.files;
  const bool remoteStorage =
      (givenOutput.enabled && std::any_of(givenOutput.hosts.begin(), givenOutput.hosts.end(),
                                          [](const std::string& h) { return !isLocalHost(h); })) ||
      std::any_of(givenFiles.begin(), givenFiles.end(),
                  [](const BeamFormedFile& f) { return !isLocalHost(f.host); });
  plan.storagePort = remoteStorage ? uint16_t(givenOutput.storagePort) : freePort();
  p.set("OLAP.Storage.port", std::to_string(plan.storagePort));
  // The correlator settings as rtcp runs them, in both generations' keys that apply.
  for (const auto& [key, value] : given.effectiveProcessingKeys())
    if (key.starts_with("Cobalt.") || original.isDefined(key)) p.set(key, value);
  for (const auto& [key, value] : given.flagging.effectiveKeys()) p.set(key, value);
  plan.notes.push_back(given.summaryLine());
  plan.settings = quietSettings(p);
  plan.ionprocs = ionprocsByInputHost(plan.settings, options.linkPort);
  if (!options.computeHosts.empty()) {
    plan.computeHosts = options.computeHosts;
  } else if (!plan.settings.computeNodes.empty()) {
    plan.computeHosts = hostsOfNodes(plan.settings.computeNodes);
    plan.computeNodes = int(plan.settings.computeNodes.size());
  }

  const CorrelatedOutputSettings& out = plan.settings.correlatedOutput;
  std::string directory = options.directory;
  for (size_t i = 0; i < out.hosts.size() && directory.empty(); ++i)
    if (isLocalHost(out.hosts[i])) directory = out.directories[i];
  if (directory.empty()) {  // L<obsid> (appended: GCC 12 warns falsely on "L" + string)
    directory = "L";
    directory += std::to_string(plan.settings.observationId);
  }
  plan.directory = absolute(directory);
  plan.parsetPath = plan.directory + "/observation.parset";
  plan.secretPath = plan.directory + "/observation.secret";
  plan.remoteInputPath = plan.directory + "/observation.remote-input";
  const auto storageSinkOn = [&](const std::string& host) {
    if (std::none_of(plan.remoteStorageSinks.begin(), plan.remoteStorageSinks.end(),
                     [&](const RemotePartPlan& r) { return r.host == host; }))
      plan.remoteStorageSinks.push_back({"storage-sink@" + host, host, plan.remoteInputPath});
  };
  for (size_t i = 0; i < out.filenames.size() && out.enabled; ++i) {
    const std::string path = out.directories[i] + "/" + out.filenames[i];
    if (isLocalHost(out.hosts[i])) {
      plan.measurementSets.push_back(path);
      continue;
    }
    plan.remoteMeasurementSets.push_back(out.hosts[i] + ":" + path);
    storageSinkOn(out.hosts[i]);
  }
  for (const BeamFormedFile& file : plan.settings.beamFormed.files) {
    const std::string path = file.directory + "/" + file.filename;
    if (isLocalHost(file.host)) {
      plan.beamFormedFiles.push_back(path);
      continue;
    }
    plan.remoteBeamFormedFiles.push_back(file.host + ":" + path);
    storageSinkOn(file.host);
  }

  const std::vector<std::string> simulated = simulatedOn(plan.settings, "");
  if (simulated.size() == plan.settings.stations.size()) {
    plan.stationSimParsetPath = plan.parsetPath;
  } else if (!simulated.empty()) {
    plan.stationSimParset = parsetOfStations(p, simulated);
    plan.stationSimParsetPath = plan.directory + "/station-sim.parset";
  }
  // Stations fed from another input host are simulated there: the streams come from it.
  for (const IonprocPlan& ionproc : plan.ionprocs) {
    const std::vector<std::string> there =
        ionproc.remote ? simulatedOn(plan.settings, ionproc.inputHost) : std::vector<std::string>{};
    if (there.empty()) continue;
    const std::string name = "station-sim@" + ionproc.inputHost;
    plan.remoteStationSims.push_back(
        {name, ionproc.inputHost, plan.directory + "/" + name + ".parset"});
    plan.remoteStationSimParsets.emplace_back(plan.remoteStationSims.back().parsetPath,
                                              parsetOfStations(p, there));
  }
  return plan;
}

void ObservationPlan::createDirectory() const {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw std::runtime_error("cannot create the observation directory " + directory + ": " +
                             error.message());
}

void ObservationPlan::recordInput(const std::string& given) {
  const std::string dir = std::filesystem::absolute(given).lexically_normal().string();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    if (entry.path().extension() == ".rsp")
      throw std::runtime_error("--record-input " + dir + " holds recordings already (" +
                               entry.path().filename().string() +
                               "); a recording is never overwritten");
  recordingDirectory = dir;
  parset.set("Rtcp.recordInput.directory", quoted(dir));
  settings = quietSettings(parset);
}

void ObservationPlan::write(const ObservationSecret& secret) const {
  secret.writeFile(secretPath);
  if (acrossHosts()) {  // the secret line, then the parset, for mpiexec to forward
    const int fd =
        ::open(remoteInputPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot create " + remoteInputPath);
    ::close(fd);
    std::ofstream file(remoteInputPath);
    file << secret.line() << "# effective parset written by observe (from " << parset.name()
         << ")\n"
         << parset.toString();
    file.close();
    if (!file) throw std::runtime_error("cannot write " + remoteInputPath);
  }
  auto writeParset = [](const std::string& path, const Parset& parset) {
    std::ofstream file(path);
    file << "# effective parset written by observe (from " << parset.name() << ")\n"
         << parset.toString();
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path);
  };
  writeParset(parsetPath, parset);
  if (!stationSimParsetPath.empty() && stationSimParsetPath != parsetPath)
    writeParset(stationSimParsetPath, stationSimParset);
  for (const auto& [path, simParset] : remoteStationSimParsets) writeParset(path, simParset);
}

}  // namespace rtcp::observe
