#include "ParsetChecker.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "LocalHost.h"
#include "MemoryPlan.h"
#include "rtcp/DirectionConverter.h"
#include "rtcp/Logger.h"
#include "rtcp/MeasuresData.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

/// An output location the settings name, each host:directory once: where the parset names
/// it (Observation.DataProducts.Output_*.locations), host and directory.
struct OutputLocation {
  std::string key;
  std::string host;
  std::string directory;
};

/// The locations of the enabled outputs: the correlated output's (one per subband) and the
/// beam-formed files' (one per file, coherent and incoherent).
std::vector<OutputLocation> outputLocations(const ObservationSettings& s) {
  std::vector<OutputLocation> locations;
  std::set<std::string> seen;
  auto add = [&](const std::string& output, const std::string& host, const std::string& directory) {
    if (seen.insert(host + ":" + directory).second)
      locations.push_back({"Observation.DataProducts." + output + ".locations", host, directory});
  };
  const CorrelatedOutputSettings& correlated = s.correlatedOutput;
  if (correlated.enabled)
    for (size_t i = 0; i < correlated.hosts.size() && i < correlated.directories.size(); ++i)
      add("Output_Correlated", correlated.hosts[i], correlated.directories[i]);
  for (const BeamFormedFile& file : s.beamFormed.files)
    add(file.coherent ? "Output_CoherentStokes" : "Output_IncoherentStokes", file.host,
        file.directory);
  return locations;
}

/// A problem worded as ParsetError words it ("FILE:LINE: key 'K': problem").
ParsetProblem problem(const Parset& p, const std::string& key, const std::string& text,
                      bool error = true) {
  const int line = p.lineOf(key);
  return {error, key, line, ParsetError(p.name(), line, key, text).what()};
}

/// Runs one check; what it throws (a file system error) becomes a problem of its own.
template <typename Check>
void guarded(const Parset& p, std::vector<ParsetProblem>& out, Check check) {
  try {
    check();
  } catch (const std::exception& e) {
    out.push_back({true, "", 0, p.name() + ": " + e.what()});
  }
}

ParsetProblem fromError(const ParsetError& e) { return {true, e.key(), e.line(), e.what()}; }

std::string portsKey(const std::string& field) { return "PIC.Core." + field + ".RSP.ports"; }

/// Whether a UDP port can be bound here now (ionproc will bind it).
bool udpPortFree(uint16_t port, std::string& reason) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return true;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  if (!free)
    reason = "cannot bind UDP port " + std::to_string(port) + ": " + std::strerror(errno) +
             " (port in use)";
  close(fd);
  return free;
}

}  // namespace

bool CheckResult::hasErrors() const {
  return std::any_of(problems.begin(), problems.end(),
                     [](const ParsetProblem& p) { return p.error; });
}

std::string recordingPath(const std::string& parsetPath, const std::string& path) {
  if (path.starts_with("/")) return path;
  return (fs::absolute(parsetPath).parent_path() / path).lexically_normal().string();
}

bool isWritableOrCreatable(const std::string& directory, std::string& reason) {
  std::error_code error;
  fs::path path = fs::absolute(directory, error);
  if (fs::exists(path, error)) {
    if (!fs::is_directory(path, error)) {
      reason = "'" + directory + "' exists and is not a directory";
      return false;
    }
    if (access(path.c_str(), W_OK | X_OK) != 0) {
      reason = "directory '" + directory + "' is not writable";
      return false;
    }
    return true;
  }
  while (path.has_parent_path() && path != path.parent_path() && !fs::exists(path, error))
    path = path.parent_path();
  if (!fs::is_directory(path, error) || access(path.c_str(), W_OK | X_OK) != 0) {
    reason = "directory '" + directory + "' cannot be created: '" + path.string() +
             "' is not a writable directory";
    return false;
  }
  return true;
}

CheckResult ParsetChecker::check(const std::string& path) const {
  CheckResult result;
  try {
    result.parset = Parset::fromFile(path, SyntaxErrors::kKeep);
  } catch (const ParsetError& e) {  // unreadable
    result.problems.push_back(fromError(e));
    return result;
  }
  // A bad line is skipped: the rest of the parset is checked as well.
  for (const ParsetError& e : result.parset.syntaxErrors()) result.problems.push_back(fromError(e));
  // Every bad key at once, and the settings as far as they could be read, for the checks
  // of what the parset asks of this machine.
  std::vector<ParsetError> errors;
  ObservationSettings s;
  try {
    s = ObservationSettings::readAll(result.parset, StationTable::shipped(), errors);
    if (errors.empty()) result.settings = s;
  } catch (const std::exception& e) {  // not a key's problem: nothing to go on
    result.problems.push_back({true, "", 0, result.parset.name() + ": " + e.what()});
  }
  for (const ParsetError& e : errors) result.problems.push_back(fromError(e));
  if (result.settings) checkSettings(result);
  const Parset& p = result.parset;
  checkInputs(p, s, result.problems);
  checkTimes(p, s, result.problems);
  checkMeasures(p, s, result.problems);
  checkOutput(p, s, result.problems);
  checkRanks(p, s, result.problems);
  checkHosts(p, s, result.problems);
  std::stable_sort(
      result.problems.begin(), result.problems.end(),
      [](const ParsetProblem& a, const ParsetProblem& b) { return a.error > b.error; });
  return result;
}

void ParsetChecker::checkSettings(CheckResult& result) const {
  const ObservationSettings& s = *result.settings;
  for (const ParsetWarning& warning : s.warnings)
    result.problems.push_back({false, warning.key, warning.line, warning.message});
  const UnknownKeys& unknown = s.unknownKeys;
  const std::vector<std::string> lines = unknown.describe();
  for (size_t i = 0; i < lines.size(); ++i) {
    const UnknownKeyGroup* group = i ? &unknown.listed[i - 1] : nullptr;
    const std::string key = group ? group->firstKey : "";
    result.problems.push_back({false, key, group ? result.parset.lineOf(key) : 0,
                               result.parset.name() + ": " + lines[i]});
  }
  // A beam that tracks a solar-system body needs casacore's ephemeris: try it now.
  for (size_t b = 0; b < s.beams.size(); ++b)
    if (!s.beams[b].isJ2000()) {
      try {
        DirectionConverter(s.referencePhaseCenter).itrf(s.beams[b], s.startTime);
      } catch (const std::exception& e) {
        result.problems.push_back(problem(
            result.parset, "Observation.Beam[" + std::to_string(b) + "].directionType", e.what()));
      }
    }
  checkMemory(result);
  if (!s.correlatedOutput.enabled && !s.beamFormed.enabled())
    result.problems.push_back(
        problem(result.parset, "Observation.DataProducts.Output_Correlated.enabled",
                "no correlated and no beam-formed output: the observation writes nothing", false));
}

void ParsetChecker::checkInputs(const Parset& p, const ObservationSettings& s,
                                std::vector<ParsetProblem>& out) const {
  std::map<std::string, std::string> users;  // "udp:HOST:PORT" or "file:PATH" -> station
  for (const StationSettings& field : s.stations) {
    const std::string& station = field.name;
    const std::string key = portsKey(station);
    guarded(p, out, [&] {
      std::set<std::string> hosts;  // one ionproc reads a station: all its inputs on one host
      for (const std::string& input : field.inputs) {
        StreamDescriptor d;
        try {
          d = StreamDescriptor::parse(input);
        } catch (const StreamError& e) {
          out.push_back(problem(p, key, e.what()));
          continue;
        }
        if (d.kind == StreamDescriptor::Kind::kFile) {
          d.path = recordingPath(p.name(), d.path);
          std::error_code error;
          if (!fs::is_regular_file(d.path, error) || access(d.path.c_str(), R_OK) != 0)
            out.push_back(problem(p, key,
                                  "recording '" + d.path + "' of station '" + station +
                                      "' does not exist or cannot be read"));
        }
        // Inputs on another host: its ionproc binds them there (observe/README.md, Several
        // hosts).
        const std::string host = isLocalHost(d.host) ? "this host" : d.host;
        hosts.insert(d.kind == StreamDescriptor::Kind::kUdp ? d.host : "");
        if (hosts.size() == 2)
          out.push_back(problem(p, key,
                                "the inputs of station '" + station +
                                    "' reach different hosts; one ionproc reads a station"));
        std::string busy;
        if (d.kind == StreamDescriptor::Kind::kUdp && host == "this host" &&
            !users.count("port " + std::to_string(d.port) + " on " + host) &&
            !udpPortFree(d.port, busy))
          out.push_back(
              problem(p, key, "input '" + input + "' of station '" + station + "': " + busy));
        const std::string id = d.kind == StreamDescriptor::Kind::kFile
                                   ? "file:" + fs::weakly_canonical(d.path).string()
                                   : "port " + std::to_string(d.port) + " on " + host;
        const auto [it, fresh] = users.emplace(id, station);
        if (!fresh)
          out.push_back(problem(p, key,
                                "input '" + input + "' of station '" + station + "' uses " + id +
                                    ", already an input of station '" + it->second + "'"));
      }
    });
  }
}

void ParsetChecker::checkTimes(const Parset& p, const ObservationSettings& s,
                               std::vector<ParsetProblem>& out) const {
  // startTime 0: it could not be read (ObservationSettings said why).
  if (s.startTime <= 0 || options_.now || s.startTime >= options_.wallTime) return;
  bool liveInput = false;
  for (const StationSettings& station : s.stations)
    for (const std::string& input : station.inputs)
      liveInput = liveInput || input.starts_with("udp:");
  if (liveInput && s.realTime)
    out.push_back(problem(
        p, "Observation.startTime",
        "start time '" + formatUtc(s.startTime) + "' is in the past (use --now to start now)"));
}

void ParsetChecker::checkMeasures(const Parset& p, const ObservationSettings& s,
                                  std::vector<ParsetProblem>& out) const {
  double start = s.startTime, stop = s.stopTime;
  if (start <= 0 || stop <= start) return;  // ObservationSettings reports it
  if (options_.now) {                       // --now moves the observation to now
    stop = options_.wallTime + (stop - start);
    start = options_.wallTime;
  }
  const std::string text = measuresProblem(findMeasuresTables(), start, stop);
  if (!text.empty()) out.push_back(problem(p, "Observation.startTime", text, false));
}

void ParsetChecker::checkOutput(const Parset& p, const ObservationSettings& s,
                                std::vector<ParsetProblem>& out) const {
  std::string reason;
  if (!options_.observationDir.empty() && !isWritableOrCreatable(options_.observationDir, reason))
    out.push_back({true, "--dir", 0, "--dir: " + reason});
  for (const OutputLocation& location : outputLocations(s)) {
    if (!isLocalHost(location.host)) {
      if (!location.directory.starts_with("/"))
        out.push_back(problem(p, location.key,
                              "output location '" + location.host + ":" + location.directory +
                                  "' on another host needs an absolute directory"));
      continue;
    }
    if (!isWritableOrCreatable(location.directory, reason))
      out.push_back(problem(p, location.key, "output " + reason));
  }
}

void ParsetChecker::checkRanks(const Parset& p, const ObservationSettings& s,
                               std::vector<ParsetProblem>& out) const {
  const size_t nodes = s.computeNodes.size();  // COBALT's compute nodes: one rank each
  if (nodes > 0 && !options_.hostsGiven) {
    if (options_.ranksGiven && size_t(options_.ranks) != nodes)
      out.push_back(problem(p, "Cobalt.Nodes",
                            "names " + std::to_string(nodes) +
                                " compute nodes (one rank each), but --ranks is " +
                                std::to_string(options_.ranks)));
    return;  // their cores are theirs
  }
  if (options_.ranks < 1)
    out.push_back(
        {true, "--ranks", 0, "--ranks " + std::to_string(options_.ranks) + ": at least one rank"});
  if (options_.ranks > options_.cores)
    out.push_back({true, "--ranks", 0,
                   "--ranks " + std::to_string(options_.ranks) + ": more ranks than the " +
                       std::to_string(options_.cores) +
                       " cores of this machine (MPICH busy-polls: at most one rank per core)"});
}

void ParsetChecker::checkMemory(CheckResult& result) const {
  const ObservationSettings& s = *result.settings;
  LocalParts local;
  for (const StationSettings& st : s.stations) {
    bool here = true;  // recordings are read here; udp: inputs where they are bound
    for (const std::string& input : st.inputs) try {
        const StreamDescriptor d = StreamDescriptor::parse(input);
        here = here && (d.kind != StreamDescriptor::Kind::kUdp || isLocalHost(d.host));
      } catch (const StreamError&) {  // checkInputs names it
      }
    local.ionprocStations += here;
  }
  const bool ranksElsewhere =
      options_.hostsGiven || std::any_of(s.computeNodes.begin(), s.computeNodes.end(),
                                         [](const ComputeNode& n) { return !isLocalHost(n.host); });
  local.ranks = ranksElsewhere ? 0 : std::max(options_.ranks, 1);
  if (s.correlatedOutput.enabled)
    for (const std::string& host : s.correlatedOutput.hosts)
      local.storageSubbands += isLocalHost(host);
  local.storageSink = local.storageSubbands > 0 ||
                      std::any_of(s.beamFormed.files.begin(), s.beamFormed.files.end(),
                                  [](const BeamFormedFile& f) { return isLocalHost(f.host); });
  const std::optional<HostMemory> available = hostMemory();
  if (!available) return;
  const std::string refusal = memoryRefusal(planMemory(s, local), *available);
  if (!refusal.empty())
    result.problems.push_back(
        problem(result.parset, "Observation.VirtualInstrument.stationList", refusal));
}

namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// Hosts one part of the settings names, and what runs that part here instead.
struct NamedHosts {
  std::string key;   ///< where the parset names them
  std::string what;  ///< "the output hosts", ...
  std::string hint;  ///< the edit or option that runs the part here
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<std::string>> users;  ///< host -> fields (inputs)
};

}  // namespace

void ParsetChecker::checkHosts(const Parset& p, const ObservationSettings& s,
                               std::vector<ParsetProblem>& out) const {
  // mpiexec would try each through ssh and fail only after its start-up time: say it now.
  std::vector<NamedHosts> named;
  if (!options_.hostsGiven) {  // --mpi-hosts replaces Cobalt.Nodes
    NamedHosts nodes{"Cobalt.Nodes",
                     "the compute nodes' hosts (PIC.Core.Cobalt.<node>.host)",
                     "--mpi-hosts localhost:N runs N ranks on this host",
                     {},
                     {}};
    for (const ComputeNode& node : s.computeNodes) nodes.hosts.push_back(node.host);
    named.push_back(std::move(nodes));
  }
  NamedHosts inputs{"",
                    "the stations' input hosts (PIC.Core.<field>.RSP.ports)",
                    "udp:127.0.0.1:PORT receives on this host",
                    {},
                    {}};
  for (const StationSettings& field : s.stations)
    for (const std::string& input : field.inputs) {
      if (!input.starts_with("udp:")) continue;
      try {
        const std::string host = StreamDescriptor::parse(input).host;
        inputs.hosts.push_back(host);
        std::vector<std::string>& fields = inputs.users[host];
        if (fields.empty() || fields.back() != field.name) fields.push_back(field.name);
        if (inputs.key.empty()) inputs.key = portsKey(field.name);
      } catch (const StreamError&) {  // checkInputs names it
      }
    }
  named.push_back(std::move(inputs));
  const size_t firstOutput = named.size();  // one part per output, in the settings' order
  for (const OutputLocation& location : outputLocations(s)) {
    auto part = std::find_if(named.begin() + firstOutput, named.end(),
                             [&](const NamedHosts& n) { return n.key == location.key; });
    if (part == named.end()) {
      named.push_back(NamedHosts{
          location.key, "the output hosts", "localhost:DIR writes on this host", {}, {}});
      part = named.end() - 1;
    }
    if (std::find(part->hosts.begin(), part->hosts.end(), location.host) == part->hosts.end())
      part->hosts.push_back(location.host);
  }
  // Every name looked up at once: the check takes at most one timeout.
  constexpr double kTimeoutSeconds = 3;
  std::vector<std::string> others;
  for (const NamedHosts& part : named)
    for (const std::string& host : part.hosts)
      if (!isLocalHost(host)) others.push_back(host);
  size_t unanswered = 0;
  const std::vector<std::string> failed = unresolvableHosts(others, kTimeoutSeconds, &unanswered);
  const std::string silence = unanswered ? "; " + std::to_string(unanswered) +
                                               " of the parset's hosts unanswered after " +
                                               std::to_string(int(kTimeoutSeconds)) + " s"
                                         : "";
  for (const NamedHosts& part : named) {
    std::vector<std::string> bad;
    for (const std::string& host : failed)
      if (std::find(part.hosts.begin(), part.hosts.end(), host) != part.hosts.end())
        bad.push_back(part.users.count(host) ? host + " (" + listed(part.users.at(host)) + ")"
                                             : host);
    if (!bad.empty())
      out.push_back(problem(
          p, part.key,
          part.what + " do not resolve here: " + listed(bad) + silence + " (" + part.hint + ")",
          !options_.launcherGiven));
  }
}

}  // namespace rtcp::observe
