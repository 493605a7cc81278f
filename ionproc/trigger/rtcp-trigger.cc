// rtcp-trigger OBSDIR --from UTC --to UTC [--stations A,B] [--out DIR]: asks every ionproc
// of a running observation for a window of its station buffers (TriggerProtocol.h), and
// writes dump.parset beside the recordings they write, which replays exactly that window
// through `observe` with the observation's blocks. Exit 0 when the dump is complete; 1
// when part of it is missing (said which); 2 when it was refused or could not be asked.
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>

#include "rtcp/CommandLine.h"
#include "rtcp/Handshake.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/ReplayParset.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StatusFile.h"
#include "rtcp/Stream.h"
#include "rtcp/TriggerProtocol.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace rtcp;

namespace {

struct Options {
  std::string observation;
  std::string from, to;
  std::string stations;
  std::string out;
  std::string secretFile;
};

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  po::options_description visible(
      "usage: rtcp-trigger OBSDIR --from UTC --to UTC [options]\n\noptions");
  visible.add_options()("help,h", "this help")("from", po::value(&o.from)->required(),
                                               "the window's start, UTC ('2026-11-22 20:00:01.5')")(
      "to", po::value(&o.to)->required(), "the window's end, UTC")(
      "stations", po::value(&o.stations),
      "these stations only (comma-separated antenna fields or stations; default: all)")(
      "out", po::value(&o.out),
      "the dump's directory (default OBSDIR/dumps/FROM); must not exist or be empty")(
      "secret-file", po::value(&o.secretFile),
      "the observation's secret (default OBSDIR/observation.secret)");
  const std::string about =
      "\nAsks every ionproc of the running observation in OBSDIR for the window of its station\n"
      "buffers: they write what they still hold (and wait for what has not arrived yet) into\n"
      "recordings in the dump's directory, and this writes dump.parset there, which replays\n"
      "the window (`observe DIR/dump.parset`) with the observation's integrations.\n"
      "Exit 0: complete; 1: partly missing (what is said); 2: refused or not asked.\n";
  if (!parseCommandLine(argc, argv, visible, "OBSDIR", o.observation, about)) return std::nullopt;
  return o;
}

/// One ionproc: its trigger port and stations (from its status file in OBSDIR).
struct Ionproc {
  std::string statusFile;
  std::string host;
  uint16_t port = 0;
  std::vector<std::string> stations;
};

std::vector<Ionproc> ionprocsOf(const std::string& observation) {
  std::vector<Ionproc> result;
  for (const auto& entry : fs::directory_iterator(observation)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("ionproc") || entry.path().extension() != ".status") continue;
    const ion::IonStatus status = ion::IonStatus::read(entry.path().string());
    Ionproc ionproc;
    ionproc.statusFile = entry.path().string();
    const size_t colon = status.trigger.rfind(':');
    if (colon == std::string::npos)
      throw std::runtime_error(ionproc.statusFile +
                               " names no trigger port: this ionproc takes "
                               "no triggers (--trigger none, or it has finished)");
    ionproc.host = status.trigger.substr(0, colon);
    ionproc.port = uint16_t(std::stoi(status.trigger.substr(colon + 1)));
    for (const auto& st : status.stations) ionproc.stations.push_back(st.name);
    result.push_back(std::move(ionproc));
  }
  if (result.empty())
    throw std::runtime_error(observation +
                             " holds no ionproc status file: is it an observation "
                             "directory, and does it run?");
  return result;
}

TriggerAnswer ask(const Ionproc& ionproc, const TriggerRequest& request,
                  const Handshake& handshake) {
  std::unique_ptr<Stream> connection = connectTcp(ionproc.host, ionproc.port, 5);
  handshake.proveToPeer(connection->fileDescriptor());
  const std::string text = request.format();
  connection->write(text.data(), text.size());
  return TriggerAnswer::parse(readTriggerMessage(*connection));
}

std::string compactUtc(double t) {
  std::string text = formatUtc(t);
  for (char& c : text)
    if (c == ' ')
      c = 'T';
    else if (c == ':')
      c = '-';
  return text;
}

int run(const Options& o) {
  const std::string obs = fs::absolute(o.observation).lexically_normal().string();
  const Parset parset = Parset::fromFile(obs + "/observation.parset");
  const ObservationSettings settings = ObservationSettings::fromParset(parset);
  const ObservationSecret secret = ObservationSecret::readFile(
      o.secretFile.empty() ? obs + "/observation.secret" : o.secretFile);
  TriggerRequest request;
  request.from = parseUtc(o.from);
  request.to = parseUtc(o.to);
  if (!(request.from < request.to)) throw std::runtime_error("--to must be after --from");
  std::vector<std::string> wanted;  // antenna field names
  std::istringstream list(o.stations);
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty()) continue;
    const int index = settings.stationIndex(name);
    if (index < 0) throw std::runtime_error("--stations: " + name + " is not in the observation");
    wanted.push_back(settings.stations[size_t(index)].name);
  }
  const std::string out =
      fs::absolute(o.out.empty() ? obs + "/dumps/" + compactUtc(request.from) : o.out)
          .lexically_normal()
          .string();
  request.directory = out;

  const Handshake handshake(secret, uint64_t(settings.observationId), ConnectionPurpose::kTrigger);
  std::vector<std::future<TriggerAnswer>> answers;
  std::vector<std::string> asked;
  for (const Ionproc& ionproc : ionprocsOf(obs)) {
    TriggerRequest mine = request;
    if (!wanted.empty()) {
      mine.stations.clear();
      for (const std::string& name : wanted)
        if (std::find(ionproc.stations.begin(), ionproc.stations.end(), name) !=
            ionproc.stations.end())
          mine.stations.push_back(name);
      if (mine.stations.empty()) continue;
    }
    asked.push_back(ionproc.host + ":" + std::to_string(ionproc.port));
    answers.push_back(std::async(std::launch::async, ask, ionproc, mine, handshake));
  }
  int code = 0;
  std::optional<BlockWindow> window;
  TriggerAnswer all;  // the answers merged: dump.answer
  auto failed = [&](const std::string& why) {
    RTCP_LOG_ERROR("rtcp-trigger", why);
    all.error += (all.error.empty() ? "" : "; ") + why;
    code = 2;
  };
  for (size_t i = 0; i < answers.size(); ++i) {
    TriggerAnswer a;
    try {
      a = answers[i].get();
    } catch (const std::exception& e) {
      failed("ionproc at " + asked[i] + ": " + e.what());
      continue;
    }
    if (a.status == "refused") {
      failed("ionproc at " + asked[i] + " refused: " + a.error);
      continue;
    }
    window = BlockWindow{a.firstBlock, a.nrBlocks, a.leadInBlocks};
    all.firstBlock = a.firstBlock;
    all.nrBlocks = a.nrBlocks;
    all.leadInBlocks = a.leadInBlocks;
    all.firstSample = a.firstSample;
    all.endSample = a.endSample;
    all.recordings.insert(all.recordings.end(), a.recordings.begin(), a.recordings.end());
    all.gaps.insert(all.gaps.end(), a.gaps.begin(), a.gaps.end());
    for (const auto& r : a.recordings)
      std::cout << "recording " << r.path << ": " << r.packets << " packets, " << r.bytes
                << " bytes"
                << (r.notRecorded ? ", " + std::to_string(r.notRecorded) + " not written" : "")
                << "\n";
    const SampleClock clock(settings.clockMHz);
    for (const auto& g : a.gaps) {
      std::cout << "missing " << g.describe(clock) << "\n";
      if (g.why == "gone from the buffer") code = std::max(code, 1);
    }
    if (a.status == "partial") code = std::max(code, 1);
  }
  if (!window) {
    RTCP_LOG_ERROR("rtcp-trigger", "no dump was written");
    return 2;
  }
  Parset dump = replayParset(parset, settings, out, out + "/ms", window);
  if (!wanted.empty()) {
    std::string list = "[";
    for (const std::string& name : wanted) list += (list.size() > 1 ? ", " : "") + name;
    dump.set("Observation.VirtualInstrument.stationList", list + "]");
  }
  std::ofstream file(out + "/dump.parset");
  file << "# replays the dump of observation " << settings.observationId << ", "
       << formatUtc(request.from) << " .. " << formatUtc(request.to) << " (blocks "
       << window->firstBlock << " .. " << window->firstBlock + window->nrBlocks - 1
       << (window->leadInBlocks > 0
               ? ", after a lead-in of " + std::to_string(window->leadInBlocks) +
                     " for the beam former"
               : "")
       << "; written by rtcp-trigger)\n"
       << dump.toString();
  file.close();
  if (!file) throw std::runtime_error("cannot write " + out + "/dump.parset");
  all.status = code == 0 ? "complete" : "partial";
  std::ofstream answer(out + "/" + kDumpAnswerFile);
  answer << all.format();
  answer.close();
  if (!answer) throw std::runtime_error("cannot write " + out + "/" + kDumpAnswerFile);
  std::cout << "dump "
            << (code == 0   ? "complete"
                : code == 1 ? "partial"
                            : "incomplete")
            << ": " << out << "/dump.parset replays blocks " << window->firstBlock << " .. "
            << window->firstBlock + window->nrBlocks - 1 << " ("
            << formatUtc(settings.startTime + double(window->firstBlock) * settings.blockDuration())
            << " .. "
            << formatUtc(settings.startTime +
                         double(window->firstBlock + window->nrBlocks) * settings.blockDuration())
            << ")\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Logger::setProcessName("rtcp-trigger");
  try {
    const std::optional<Options> options = parseOptions(argc, argv);
    return options ? run(*options) : 0;
  } catch (const po::error& e) {
    RTCP_LOG_ERROR("rtcp-trigger", e.what() << " (see rtcp-trigger --help)");
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("rtcp-trigger", e.what());
  }
  return 2;
}
