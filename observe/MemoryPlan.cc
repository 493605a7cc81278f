#include "MemoryPlan.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "rtcp/Baselines.h"
#include "rtcp/BeamFormedSendPool.h"
#include "rtcp/IntegrationSendPool.h"
#include "rtcp/RspPacket.h"
#include "rtcp/StationBufferSize.h"

namespace rtcp::observe {
namespace {

constexpr double kGB = 1e9;

std::string gigabytes(double bytes) {
  std::ostringstream out;
  out.precision(bytes >= 10 * kGB ? 0 : 2);
  out << std::fixed << bytes / kGB << " GB";
  return out.str();
}

}  // namespace

std::vector<MemoryItem> planMemory(const ObservationSettings& s, const LocalParts& local) {
  std::vector<MemoryItem> plan;
  const double sampleBytes = bytesPerDualPolSample(s.bitsPerSample);
  const std::string stations = "antenna fields (Observation.VirtualInstrument.stationList)";
  const std::string subbands = "subbands (Observation.Beam[*].subbandList)";
  if (local.ionprocStations > 0) {
    // The ring of every station-subband, as the station input allocates it (the largest
    // station's, for each served here).
    double largest = 0;
    for (int index = 0; index < s.nrStations(); ++index)
      largest = std::max(largest, stationBufferBytes(s, index));
    const int64_t capacity = stationBufferCapacity(s);
    std::ostringstream keys;
    keys << local.ionprocStations << " " << stations << " x " << s.nrSubbands() << " " << subbands
         << " x " << double(capacity) / s.subbandWidth()
         << " s (OLAP.nrSecondsOfBuffer, at least the blocks in flight and "
            "OLAP.maxNetworkDelay) x "
         << s.subbandWidth() * sampleBytes << " bytes/s (Observation.sampleClock, "
         << "Observation.nrBitsPerSample)";
    plan.push_back({"ionproc's station buffers", local.ionprocStations * largest, keys.str()});
  }
  if (local.ranks > 0) {
    // Every station's block of every subband, as fetched (raw samples) and as converted
    // (complex float, both polarisations), twice (the next is fetched while one is
    // processed), over all the ranks here; and the visibilities of every subband.
    const double blockBytes =
        double(s.nrStations()) * s.nrSubbands() * double(s.samplesPerBlock()) * (sampleBytes + 16);
    const double visibilities =
        double(nrBaselines(s.nrStations())) * s.channelsPerSubband * 4 * 8 * s.nrSubbands();
    std::ostringstream keys;
    keys << s.nrStations() << " " << stations << " x " << s.nrSubbands() << " " << subbands << " x "
         << s.samplesPerBlock()
         << " samples a block (Cobalt.blockSize, Observation.channelsPerSubband), twice";
    plan.push_back({"the correlator ranks' blocks", 2 * blockBytes + visibilities, keys.str()});
  }
  if (local.ionprocStations > 0 &&
      (s.flagging.postCorrelation || s.flagging.detectBrokenStations)) {
    // The post-correlation flagger holds a window of integrations of every subband
    // (output/PostCorrelationFlagger.h): visibilities and valid counts.
    const double integration =
        double(nrBaselines(s.nrStations())) * s.channelsPerSubband * (4 * 8 + 4);
    std::ostringstream keys;
    keys << s.flagging.postWindow << " integrations (Rtcp.Flagging.postCorrelation.window) x "
         << s.nrSubbands() << " " << subbands << " x " << integration << " bytes (" << stations
         << ", Observation.channelsPerSubband)";
    plan.push_back({"ionproc's post-correlation flagging window",
                    double(s.flagging.postWindow) * s.nrSubbands() * integration, keys.str()});
  }
  const IntegrationSendPool integrations = integrationSendPool(s);
  if (local.ionprocStations > 0 && integrations.bytes() > 0) {
    // The integrations on their way to storage (output/StorageSender.h): every
    // connection's queue, and its slots for those in flight and kept until the sink
    // synced them, each bounded by the subbands it carries.
    size_t queued = 0, slots = 0;
    for (const auto& [host, connection] : integrations.connections) {
      queued += connection.queueIntegrations;
      slots += connection.slots;
    }
    std::ostringstream keys;
    keys << integrations.connections.size()
         << " storage hosts (Observation.DataProducts.Output_Correlated.locations): " << queued
         << " queued (per host at least 2 x the " << subbands << " it carries) + " << slots
         << " slots (per host " << (IntegrationSendPool::kInFlightBytes >> 20)
         << " MiB in flight and ionproc's --retain-mb " << kDefaultRetainMb
         << " MiB, at most the integrations it carries) x " << integrations.integrationBytes
         << " bytes (" << stations << ", Observation.channelsPerSubband)";
    plan.push_back({"ionproc's integrations to storage", integrations.bytes(), keys.str()});
  }
  const BeamFormedSendPool pool = beamFormedSendPool(s);
  if (local.ionprocStations > 0 && pool.slots() > 0) {
    // The pool of beam-formed blocks on their way to storage (output/StorageSender.h):
    // every connection's queue and the blocks kept until the sink synced them.
    std::ostringstream keys;
    keys << pool.connections
         << " storage hosts (Output_CoherentStokes/IncoherentStokes.locations) x ("
         << pool.queueBlocks << " queued + " << pool.keptBlocks
         << " kept: TABs (Observation.Beam[*].nrTiedArrayBeams) x " << subbands << " x blocks) + "
         << BeamFormedSendPool::kSpareSlots << " x " << pool.blockBytes
         << " bytes (Cobalt.BeamFormer.*Stokes.nrChannelsPerSubband, timeIntegrationFactor, which)";
    plan.push_back({"ionproc's beam-formed blocks to storage", pool.bytes(), keys.str()});
  }
  if (local.storageSink) {
    // The staging bound (storage-sink --staging-mb, 256 MiB) and what an open MS holds:
    // a DATA tile column's buffers, about 4 MB.
    plan.push_back({"storage-sink's staging and open MSs",
                    256.0 * (1 << 20) + 4e6 * local.storageSubbands,
                    std::to_string(local.storageSubbands) +
                        " MSs (Observation.DataProducts.Output_Correlated.locations)"});
  }
  return plan;
}

std::string memoryRefusal(const std::vector<MemoryItem>& plan, const HostMemory& available) {
  double total = 0;
  for (const MemoryItem& item : plan) total += item.bytes;
  // The rest of the host (observe, mpirun, page cache for the MSs) keeps a tenth.
  if (total <= 0.9 * available.bytes) return "";
  const auto largest = std::max_element(
      plan.begin(), plan.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  std::string text = "the parts on this host would need " + gigabytes(total) + ", more than the " +
                     gigabytes(0.9 * available.bytes) + " it can give (90 % of " +
                     available.source + ", " + gigabytes(available.bytes) + "):";
  for (const MemoryItem& item : plan)
    text += " " + item.part + " " + gigabytes(item.bytes) +
            (&item == &*largest ? " = " + item.keys : "") + ";";
  text.back() = '.';
  return text + " Fewer stations or subbands, or a shorter OLAP.nrSecondsOfBuffer, make it fit";
}

std::optional<OomKill> parseOomKill(const std::string& record) {
  const std::string marker = "Killed process ";
  const size_t semicolon = record.find(';');
  const size_t at = record.find(marker);
  if (semicolon == std::string::npos || at == std::string::npos ||
      record.find("of memory", semicolon) == std::string::npos)
    return std::nullopt;
  OomKill kill;
  unsigned priority = 0;
  unsigned long long sequence = 0, microseconds = 0;
  if (std::sscanf(record.c_str(), "%u,%llu,%llu", &priority, &sequence, &microseconds) != 3)
    return std::nullopt;
  kill.bootSeconds = double(microseconds) * 1e-6;
  const size_t open = record.find(" (", at), close = record.find(')', at);
  try {
    kill.pid = std::stoi(record.substr(at + marker.size()));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (open != std::string::npos && close != std::string::npos && close > open)
    kill.program = record.substr(open + 2, close - open - 2);
  return kill;
}

bool killedForMemory(int pid, const std::string& program, double sinceBootSeconds) {
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char record[8192];
  bool found = false;
  for (;;) {  // one record per read; EAGAIN at the end, EPIPE when one was overwritten
    const ssize_t n = ::read(fd, record, sizeof record - 1);
    if (n < 0 && errno == EPIPE) continue;
    if (n <= 0) break;
    const std::optional<OomKill> kill = parseOomKill(std::string(record, size_t(n)));
    found = found || (kill && kill->bootSeconds >= sinceBootSeconds &&
                      (kill->pid == pid || (!program.empty() && kill->program == program)));
  }
  ::close(fd);
  return found;
}

double bootSeconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

}  // namespace rtcp::observe
