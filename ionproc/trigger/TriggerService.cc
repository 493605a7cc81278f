#include "TriggerService.h"

#include <filesystem>

#include "StationDump.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"

namespace rtcp::ion {

TriggerService::TriggerService(const std::string& host, uint16_t port, StationInput& input,
                               Handshake handshake)
    : input_(input), handshake_(std::move(handshake)), listener_(host, port) {
  acceptor_ = std::thread([this] { acceptConnections(); });
  RTCP_LOG_INFO("ionproc", "trigger port " << host << ":" << listener_.port()
                                           << ": dumps of the station buffers on request");
}

TriggerService::~TriggerService() { stop(); }

void TriggerService::stop() {
  if (stopped_.exchange(true)) return;
  listener_.shutdown();
  if (acceptor_.joinable()) acceptor_.join();
  std::lock_guard lock(threadsMutex_);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void TriggerService::acceptConnections() {
  while (std::unique_ptr<Stream> connection = listener_.accept()) {
    if (stopped_) break;
    if (active_ >= kMaxConnections) {
      ++refused_;
      RTCP_LOG_WARN("ionproc", "trigger: " << peerAddress(connection->fileDescriptor())
                                           << " refused: " << kMaxConnections
                                           << " connections are open already");
      continue;
    }
    ++active_;
    std::lock_guard lock(threadsMutex_);
    threads_.emplace_back([this, c = std::shared_ptr<Stream>(std::move(connection))] {
      try {
        serve(*c);
      } catch (const std::exception& e) {
        RTCP_LOG_WARN("ionproc", "trigger: " << e.what());
      }
      --active_;
    });
  }
}

void TriggerService::serve(Stream& connection) {
  const std::string peer = peerAddress(connection.fileDescriptor());
  try {
    handshake_.acceptPeer(connection.fileDescriptor());
  } catch (const HandshakeError& e) {
    ++refused_;
    RTCP_LOG_ERROR("ionproc", "trigger: connection from " << peer << " refused: " << e.what());
    return;
  }
  TriggerAnswer answer;
  try {
    const TriggerRequest request = TriggerRequest::parse(readTriggerMessage(connection));
    RTCP_LOG_INFO("ionproc", "trigger from " << peer << ": " << formatUtc(request.from) << " .. "
                                             << formatUtc(request.to) << " into "
                                             << request.directory);
    answer = dump(request);
  } catch (const std::exception& e) {
    answer.status = "refused";
    answer.error = e.what();
  }
  if (answer.status == "refused") {
    ++refused_;
    RTCP_LOG_WARN("ionproc", "trigger from " << peer << " refused: " << answer.error);
  } else {
    ++dumps_;
    RTCP_LOG_INFO("ionproc", "trigger from " << peer << ": dump " << answer.status << ", "
                                             << answer.recordings.size() << " recordings, "
                                             << answer.gaps.size() << " gaps");
  }
  const std::string text = answer.format();
  connection.write(text.data(), text.size());
  connection.finishWriting(5);
}

TriggerAnswer TriggerService::dump(const TriggerRequest& request) {
  const ObservationSettings& s = input_.settings();
  DumpRequest d;
  d.from = request.from;
  d.to = request.to;
  d.directory = request.directory;
  for (const std::string& name : request.stations) {
    const int index = s.stationIndex(name);
    if (index < 0) throw std::invalid_argument("no station " + name + " in the observation");
    d.stations.push_back(index);
  }
  std::error_code error;
  if (std::filesystem::exists(d.directory, error) && !std::filesystem::is_empty(d.directory, error))
    throw std::invalid_argument(d.directory + " exists and is not empty");
  const DumpResult result = dumpStations(input_, d);
  TriggerAnswer answer;
  answer.status = result.complete() ? "complete" : "partial";
  answer.firstBlock = result.firstBlock;
  answer.nrBlocks = result.nrBlocks;
  answer.leadInBlocks = result.leadInBlocks;
  answer.firstSample = result.firstSample;
  answer.endSample = result.endSample;
  const std::vector<int> stations = d.stations.empty() ? input_.stations() : d.stations;
  size_t r = 0;
  for (int index : stations)
    for (int k = 0; k < input_.buffer(index).nrStreams() && r < result.recordings.size(); ++k) {
      const RecordingCounts& c = result.recordings[r++];
      answer.recordings.push_back(
          {s.stations[size_t(index)].name, k, c.packets, c.bytes, c.notRecorded(), c.path});
    }
  for (const DumpGap& g : result.gaps)
    answer.gaps.push_back({g.station, g.stream, g.firstSample, g.endSample, g.why});
  return answer;
}

}  // namespace rtcp::ion
