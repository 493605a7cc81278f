// station-sim PARSET [options]: stations as the network sees them. Streams RSP packets of a
// simulated sky over UDP in real time, records them, or replays recordings.
#include <boost/program_options.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>
#include <thread>

#include "RecordingReplayer.h"
#include "StationSimulator.h"
#include "rtcp/CommandLine.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSettings.h"

namespace po = boost::program_options;
using namespace rtcp;

namespace {

const char* kUsage = R"(usage: station-sim PARSET [options]

Simulates the parset's stations (Observation.* keys for the array and time, Sim.* keys
for the sky: sources, receiver noise, tone, packet loss, seed) and
  * streams their RSP packets over UDP to each station's RSP.ports (udp:HOST:PORT) in
    real time, from Observation.startTime (or --start-now) for the parset's duration
    (or --duration);
  * with --record DIR, writes one recording per input stream instead (the packets
    exactly as on the wire, concatenated): DIR/CS001LBA.rsp, DIR/CS001LBA-1.rsp for a
    second port, ...; dropped packets are listed in DIR/dropped-packets.txt;
  * with --replay (implied when every RSP.ports entry is file:PATH), sends the
    recordings the parset names to the --replay-to destinations (one udp:HOST:PORT per
    recording, in station and port order, comma-separated). Without --restamp or
    --restamp-by the replay starts at once, with the packets' timestamps unchanged, and
    keeps the pace their timestamps set (a packet leaves as long after the first as its
    timestamp is later). --restamp shifts every timestamp by the whole, even number of
    seconds that makes the replay start now (within 2 s; an even shift keeps the
    sequence numbers valid: at 200 MHz even seconds hold 195313 samples, odd ones
    195312); --restamp-by S shifts them by S seconds (the shift observe --now reports for
    the observation) and sends each packet when the clock reaches its new timestamp:
    later ones wait, earlier ones go at once, as fast as the network takes them
    (--restamp-by 0: at their own timestamps).

A station's subbands are spread over its RSP.ports in order, beamletsPerPacket (61, 122
or 244 for 16, 8 or 4 bit) per stream. Station s records each source as
e(t + tau_s) exp(2 pi i f_subband tau_s) (DESIGN 2.3), tau_s its true geometric delay plus
clock correction; the tone (Sim.tone.*) is delayed toward beam 0. Every subband is
shaped as a LOFAR station's polyphase filter bank delivers it (the real coefficients):
its edges roll off and the neighbouring subbands alias into them, each with its own
delay phase; receiver noise is white before that filter bank. Samples are scaled to
an rms of 1024 / 20 / 2.5 per component (16 / 8 / 4 bit). Generation is reproducible
from Sim.seed. PARSET '-' reads the parset from standard input. Exit status is
non-zero on any error.
)";

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

int replay(const ObservationSettings& settings, const po::variables_map& vm) {
  std::vector<std::string> recordings;
  for (const StationSettings& station : settings.stations)
    for (const std::string& input : station.inputs) {
      const StreamDescriptor d = StreamDescriptor::parse(input);
      if (d.kind == StreamDescriptor::Kind::kFile) recordings.push_back(d.path);
    }
  if (recordings.empty())
    throw std::runtime_error("--replay: the parset's RSP.ports name no file: recordings");
  const std::vector<std::string> destinations =
      splitList(vm.count("replay-to") ? vm["replay-to"].as<std::string>() : "");
  if (destinations.size() != recordings.size())
    throw std::runtime_error("--replay-to gives " + std::to_string(destinations.size()) +
                             " destinations for the parset's " + std::to_string(recordings.size()) +
                             " recordings (one udp:HOST:PORT per recording, comma-separated)");
  std::vector<sim::RecordingReplayer::Input> inputs;
  for (size_t i = 0; i < recordings.size(); ++i) inputs.push_back({recordings[i], destinations[i]});
  sim::RecordingReplayer::Options options;
  options.restamp = vm.count("restamp") > 0;
  if (vm.count("restamp-by")) options.restampBy = vm["restamp-by"].as<int64_t>();
  options.duration = vm["duration"].as<double>();
  const auto totals = sim::RecordingReplayer(inputs, options).run();
  for (size_t i = 0; i < inputs.size(); ++i)
    RTCP_LOG_INFO("station-sim", inputs[i].recording << " -> " << inputs[i].destination << ": "
                                                     << totals[i].packets << " packets, "
                                                     << totals[i].bytes << " bytes");
  RTCP_LOG_INFO("station-sim", "replayed "
                                   << totals.back().packets << " packets, " << totals.back().bytes
                                   << " bytes, " << totals.back().seconds << " s of data; "
                                   << "worst lag " << totals.back().maxLateness * 1e3 << " ms");
  return 0;
}

int simulate(const ObservationSettings& settings, const po::variables_map& vm) {
  sim::SimulatorOptions options;
  if (vm.count("record")) options.recordDirectory = vm["record"].as<std::string>();
  options.duration = vm["duration"].as<double>();
  options.startNow = vm.count("start-now") > 0;
  options.threads = vm["threads"].as<int>();
  if (vm.count("drop-log")) options.dropLogPath = vm["drop-log"].as<std::string>();
  if (options.threads < 1) throw std::runtime_error("--threads must be at least 1");
  sim::StationSimulator simulator(settings, options);
  const sim::SimulationSummary summary = simulator.run();
  for (size_t i = 0; i < summary.streams.size(); ++i) {
    const auto& stream = summary.streams[i];
    const sim::StreamLayout& layout = simulator.streams()[i];
    RTCP_LOG_INFO("station-sim", layout.stationName
                                     << " port " << layout.port << " (" << layout.nrBeamlets()
                                     << " beamlets) -> " << stream.output << ": " << stream.packets
                                     << " packets, " << stream.bytes << " bytes, " << stream.dropped
                                     << " dropped");
  }
  RTCP_LOG_INFO(
      "station-sim",
      "total: " << summary.packets << " packets, " << summary.bytes << " bytes, " << summary.seconds
                << " s of data per stream, " << summary.dropped << " packets dropped"
                << (summary.dropLogPath.empty() ? "" : " (listed in " + summary.dropLogPath + ")")
                << ", " << summary.clipped << " components clipped"
                << (options.recordDirectory.empty()
                        ? ", worst lag " + std::to_string(summary.maxLateness * 1e3) + " ms"
                        : ""));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Logger::setProcessName("station-sim");
  po::options_description visible(std::string(kUsage) + "\noptions");
  visible.add_options()("help,h", "show this help")(
      "record", po::value<std::string>()->value_name("DIR"),
      "write recordings into DIR instead of sending UDP")(
      "duration", po::value<double>()->default_value(-1)->value_name("S"),
      "seconds of data (default: the parset's start..stop; replay: all)")(
      "start-now", "start at the next even second instead of Observation.startTime")(
      "threads", po::value<int>()->default_value(2)->value_name("N"), "generator threads")(
      "drop-log", po::value<std::string>()->value_name("FILE"),
      "list dropped packets here (default with --record: DIR/dropped-packets.txt)")(
      "replay", "send the parset's file: recordings (see above)")(
      "replay-to", po::value<std::string>()->value_name("LIST"),
      "udp:HOST:PORT per recording, comma-separated")(
      "restamp",
      "replay: shift timestamps by whole even seconds to start now (without this or "
      "--restamp-by: start at once, timestamps unchanged)")(
      "restamp-by", po::value<int64_t>()->value_name("S"),
      "replay: shift timestamps by S seconds (even), e.g. the shift observe --now gave the "
      "observation; each packet leaves when the clock reaches its new timestamp (0: its own)")(
      "debug", "log debug messages");
  po::variables_map vm;
  std::string parsetPath;
  try {
    if (!parseCommandLine(argc, argv, visible, "PARSET", parsetPath, "", &vm)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "station-sim: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (vm.count("debug")) Logger::setLevel(LogLevel::kDebug);
  const std::string parset = parsetPath;
  try {
    const ObservationSettings settings = ObservationSettings::fromFile(parset);
    settings.logReport("station-sim");
    int inputs = 0, recordings = 0;
    for (const StationSettings& station : settings.stations)
      for (const std::string& input : station.inputs) {
        ++inputs;
        recordings += input.rfind("file:", 0) == 0;
      }
    const bool allRecordings = inputs > 0 && recordings == inputs;
    if (vm.count("replay") || (allRecordings && !vm.count("record"))) return replay(settings, vm);
    return simulate(settings, vm);
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("station-sim", parset << ": " << e.what());
    return 1;
  }
}
