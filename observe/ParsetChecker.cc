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
#include <unordered_set>

#include "LocalHost.h"
#include "MemoryPlan.h"
#include "rtcp/AntennaFields.h"
#include "rtcp/DirectionConverter.h"
#include "rtcp/Logger.h"
#include "rtcp/MeasuresData.h"
#include "rtcp/ParsetLimits.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

const std::string kStationList = "Observation.VirtualInstrument.stationList";
/// The outputs whose locations observe checks and starts storage-sinks for.
const std::vector<std::string> kOutputs{"Output_Correlated", "Output_CoherentStokes",
                                        "Output_IncoherentStokes"};

/// Whether an output is enabled (correlated output unless switched off; the beam-formed
/// ones when switched on).
bool outputEnabled(const Parset& p, const std::string& output) {
  return p.getBool("Observation.DataProducts." + output + ".enabled",
                   output == "Output_Correlated");
}

/// A problem worded as ParsetError words it ("FILE:LINE: key 'K': problem").
ParsetProblem problem(const Parset& p, const std::string& key, const std::string& text,
                      bool error = true) {
  const int line = p.lineOf(key);
  return {error, key, line, ParsetError(p.name(), line, key, text).what()};
}

/// Runs one check; a key it cannot even read becomes a problem of its own.
template <typename Check>
void guarded(const Parset& p, std::vector<ParsetProblem>& out, Check check) {
  try {
    check();
  } catch (const ParsetError& e) {
    out.push_back({true, e.key(), e.line(), e.what()});
  } catch (const std::exception& e) {
    out.push_back({true, "", 0, p.name() + ": " + e.what()});
  }
}

/// The station list's entries; throws, in ObservationSettings' words, when it has more than
/// any observation (nothing is then checked station by station).
std::vector<std::string> stationListEntries(const Parset& p) {
  std::vector<std::string> entries = p.getStringVector(kStationList);
  if (entries.size() > kMaxStationListEntries)
    p.fail(kStationList, std::to_string(entries.size()) + " entries, more than the " +
                             std::to_string(kMaxStationListEntries) + " a station list may have");
  return entries;
}

/// The antenna fields of the station list (CS001HBA0, ...); throws as ObservationSettings.
std::vector<std::string> fieldNames(const Parset& p) {
  std::vector<std::string> names;
  try {
    for (const AntennaFieldName& field :
         antennaFieldNames(stationListEntries(p), p.getString("Observation.antennaSet")))
      names.push_back(field.name());
  } catch (const std::invalid_argument& e) {
    const bool badSet = std::string(e.what()).starts_with("unknown antenna set");
    p.fail(badSet ? "Observation.antennaSet" : kStationList, e.what());
  }
  return names;
}

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
    result.problems.push_back({true, e.key(), e.line(), e.what()});
    return result;
  }
  // A bad line is skipped: the rest of the parset is checked as well.
  for (const ParsetError& e : result.parset.syntaxErrors())
    result.problems.push_back({true, e.key(), e.line(), e.what()});
  const Parset& p = result.parset;
  checkSettings(result);
  std::vector<ParsetProblem> own;
  checkStations(p, own);
  checkSubbands(p, own);
  checkInputs(p, own);
  checkTimes(p, own);
  checkMeasures(p, own);
  checkOutput(p, own);
  checkRanks(p, own);
  checkHosts(p, own);
  // ObservationSettings reports some errors in the same words as one of ours: each once.
  std::unordered_set<std::string> known;
  for (const ParsetProblem& q : result.problems) known.insert(q.message);
  for (ParsetProblem& item : own)
    if (known.insert(item.message).second) result.problems.push_back(std::move(item));
  std::stable_sort(
      result.problems.begin(), result.problems.end(),
      [](const ParsetProblem& a, const ParsetProblem& b) { return a.error > b.error; });
  return result;
}

void ParsetChecker::checkSettings(CheckResult& result) const {
  try {
    result.settings = ObservationSettings::fromParset(result.parset);
  } catch (const ParsetErrors& e) {
    for (const ParsetError& error : e.errors())
      result.problems.push_back({true, error.key(), error.line(), error.what()});
  } catch (const ParsetError& e) {
    result.problems.push_back({true, e.key(), e.line(), e.what()});
  } catch (const std::exception& e) {
    result.problems.push_back({true, "", 0, result.parset.name() + ": " + e.what()});
  }
  if (!result.settings) return;
  for (const ParsetWarning& warning : result.settings->warnings)
    result.problems.push_back({false, warning.key, warning.line, warning.message});
  const UnknownKeys& unknown = result.settings->unknownKeys;
  const std::vector<std::string> lines = unknown.describe();
  for (size_t i = 0; i < lines.size(); ++i) {
    const UnknownKeyGroup* group = i ? &unknown.listed[i - 1] : nullptr;
    const std::string key = group ? group->firstKey : "";
    result.problems.push_back({false, key, group ? result.parset.lineOf(key) : 0,
                               result.parset.name() + ": " + lines[i]});
  }
  // A beam that tracks a solar-system body needs casacore's ephemeris: try it now.
  const ObservationSettings& s = *result.settings;
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
  if (!result.settings->correlatedOutput.enabled && !result.settings->beamFormed.enabled())
    result.problems.push_back(
        problem(result.parset, "Observation.DataProducts.Output_Correlated.enabled",
                "no correlated and no beam-formed output: the observation writes nothing", false));
}

namespace {

/// The stations of the station list, whose entries may name antenna fields (CS001HBA0),
/// each once; the entries as they are when the antenna set is not one LOFAR knows (an
/// error the settings report).
std::vector<std::string> stationNames(const Parset& p) {
  const std::vector<std::string> entries = stationListEntries(p);
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  try {
    for (const AntennaFieldName& field :
         antennaFieldNames(entries, p.getString("Observation.antennaSet", "")))
      if (seen.insert(field.station).second) names.push_back(field.station);
  } catch (const std::invalid_argument&) {
    return entries;
  }
  return names;
}

}  // namespace

void ParsetChecker::checkStations(const Parset& p, std::vector<ParsetProblem>& out) const {
  guarded(p, out, [&] {
    const StationTable& table = StationTable::shipped();
    for (const std::string& name : stationNames(p))
      if (!table.stationId(name))
        out.push_back(
            problem(p, kStationList, "unknown station '" + name + "' (not in the station table)"));
  });
}

void ParsetChecker::checkSubbands(const Parset& p, std::vector<ParsetProblem>& out) const {
  guarded(p, out, [&] {
    // Beyond kMaxBeams ObservationSettings refuses Observation.nrBeams itself.
    const int64_t nrBeams = std::min<int64_t>(p.getInt("Observation.nrBeams", 1), kMaxBeams);
    for (int64_t b = 0; b < nrBeams; ++b) {
      const std::string key = "Observation.Beam[" + std::to_string(b) + "].subbandList";
      guarded(p, out, [&] {
        for (const int64_t number : p.getIntVector(key))
          if (number < 0 || number > 511)
            out.push_back(
                problem(p, key, "subband " + std::to_string(number) + " is outside 0..511"));
      });
    }
  });
}

void ParsetChecker::checkInputs(const Parset& p, std::vector<ParsetProblem>& out) const {
  guarded(p, out, [&] {
    std::map<std::string, std::string> users;  // "udp:HOST:PORT" or "file:PATH" -> station
    for (const std::string& station : fieldNames(p)) {
      const std::string key = portsKey(station);
      if (!p.isDefined(key)) continue;  // ObservationSettings names it
      guarded(p, out, [&] {
        std::set<std::string> hosts;  // one ionproc reads a station: all its inputs on one host
        for (const std::string& input : p.getStringVector(key)) {
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
  });
}

void ParsetChecker::checkTimes(const Parset& p, std::vector<ParsetProblem>& out) const {
  double start = 0, stop = 0;
  bool haveStart = false, haveStop = false;
  guarded(p, out, [&] { start = p.getTime("Observation.startTime"), haveStart = true; });
  guarded(p, out, [&] { stop = p.getTime("Observation.stopTime"), haveStop = true; });
  if (haveStart && haveStop && stop <= start)
    out.push_back(problem(
        p, "Observation.stopTime",
        "stop time '" + formatUtc(stop) + "' is not after start time '" + formatUtc(start) + "'"));
  if (!haveStart || options_.now || start >= options_.wallTime) return;
  bool liveInput = false;
  guarded(p, out, [&] {
    for (const std::string& station : fieldNames(p))
      for (const std::string& input : p.getStringVector(portsKey(station), {}))
        liveInput = liveInput || input.starts_with("udp:");
  });
  if (liveInput && p.getBool("OLAP.realTime", true))
    out.push_back(
        problem(p, "Observation.startTime",
                "start time '" + formatUtc(start) + "' is in the past (use --now to start now)"));
}

void ParsetChecker::checkMeasures(const Parset& p, std::vector<ParsetProblem>& out) const {
  double start = 0, stop = 0;
  try {
    start = p.getTime("Observation.startTime");
    stop = p.getTime("Observation.stopTime");
  } catch (const ParsetError&) {
    return;  // checkTimes reports it
  }
  if (stop <= start) return;
  if (options_.now) {  // --now moves the observation to now
    stop = options_.wallTime + (stop - start);
    start = options_.wallTime;
  }
  const std::string text = measuresProblem(findMeasuresTables(), start, stop);
  if (!text.empty()) out.push_back(problem(p, "Observation.startTime", text, false));
}

void ParsetChecker::checkOutput(const Parset& p, std::vector<ParsetProblem>& out) const {
  std::string reason;
  if (!options_.observationDir.empty() && !isWritableOrCreatable(options_.observationDir, reason))
    out.push_back({true, "--dir", 0, "--dir: " + reason});
  std::set<std::string> seen;
  for (const std::string& output : kOutputs)
    guarded(p, out, [&] {
      if (!outputEnabled(p, output)) return;
      const std::string key = "Observation.DataProducts." + output + ".locations";
      for (const std::string& location : p.getStringVector(key, {"localhost:."})) {
        const size_t colon = location.find(':');
        if (colon == std::string::npos) continue;  // ObservationSettings names it
        const std::string directory = location.substr(colon + 1);
        if (!isLocalHost(location.substr(0, colon)) && !directory.starts_with("/"))
          out.push_back(problem(
              p, key,
              "output location '" + location + "' on another host needs an absolute directory"));
        if (!isLocalHost(location.substr(0, colon)) || !seen.insert(directory).second) continue;
        if (!isWritableOrCreatable(directory, reason))
          out.push_back(problem(p, key, "output " + reason));
      }
    });
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
  if (!refusal.empty()) result.problems.push_back(problem(result.parset, kStationList, refusal));
}

void ParsetChecker::checkRanks(const Parset& p, std::vector<ParsetProblem>& out) const {
  size_t nodes = 0;  // COBALT's compute nodes: one rank each, on their hosts
  guarded(p, out, [&] { nodes = p.getStringVector("Cobalt.Nodes", {}).size(); });
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

namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// Hosts one part of the parset names, and what runs that part here instead.
struct NamedHosts {
  std::string key;   ///< where the parset names them
  std::string what;  ///< "the output hosts", ...
  std::string hint;  ///< the edit or option that runs the part here
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<std::string>> users;  ///< host -> fields (inputs)
};

}  // namespace

void ParsetChecker::checkHosts(const Parset& p, std::vector<ParsetProblem>& out) const {
  // mpiexec would try each through ssh and fail only after its start-up time: say it now.
  std::vector<NamedHosts> named;
  guarded(p, out, [&] {
    if (options_.hostsGiven) return;  // --mpi-hosts replaces Cobalt.Nodes
    NamedHosts nodes{"Cobalt.Nodes",
                     "the compute nodes' hosts (PIC.Core.Cobalt.<node>.host)",
                     "--mpi-hosts localhost:N runs N ranks on this host",
                     {},
                     {}};
    for (const std::string& node : p.getStringVector("Cobalt.Nodes", {}))
      nodes.hosts.push_back(p.getString("PIC.Core.Cobalt." + node + ".host", "localhost"));
    named.push_back(std::move(nodes));
  });
  guarded(p, out, [&] {
    NamedHosts inputs{"",
                      "the stations' input hosts (PIC.Core.<field>.RSP.ports)",
                      "udp:127.0.0.1:PORT receives on this host",
                      {},
                      {}};
    for (const std::string& field : fieldNames(p))
      for (const std::string& input : p.getStringVector(portsKey(field), {})) {
        if (!input.starts_with("udp:")) continue;
        try {
          const std::string host = StreamDescriptor::parse(input).host;
          inputs.hosts.push_back(host);
          std::vector<std::string>& fields = inputs.users[host];
          if (fields.empty() || fields.back() != field) fields.push_back(field);
          if (inputs.key.empty()) inputs.key = portsKey(field);
        } catch (const StreamError&) {  // checkInputs names it
        }
      }
    named.push_back(std::move(inputs));
  });
  for (const std::string& output : kOutputs)
    guarded(p, out, [&] {
      if (!outputEnabled(p, output)) return;
      const std::string key = "Observation.DataProducts." + output + ".locations";
      NamedHosts outputs{key, "the output hosts", "localhost:DIR writes on this host", {}, {}};
      for (const std::string& location : p.getStringVector(key, {}))
        if (location.find(':') != std::string::npos)
          outputs.hosts.push_back(location.substr(0, location.find(':')));
      named.push_back(std::move(outputs));
    });
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
