#include "PacketReceiver.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "DatagramReceiver.h"
#include "RecordingReader.h"
#include "rtcp/WallClock.h"

namespace rtcp::ion {
namespace {

constexpr int kBatch = 64;  ///< recorded packets per buffer write
/// Pause between drains of a socket. 1 ms woke 16 stations' receivers 16 000 times a
/// second (a live ionproc spent 15 % of its time switching and sleeping); 4 ms is far
/// below the lateness a packet may have (OLAP.maxNetworkDelay, 0.25 s by default).
constexpr auto kUdpCoalesce = std::chrono::milliseconds(4);
constexpr int kUdpReceiveBuffer = 64 << 20;  ///< kernel receive buffer (needs root or rmem_max)

}  // namespace

PacketReceiver::PacketReceiver(std::string name, const StreamDescriptor& descriptor, int stream,
                               CircularSampleBuffer& buffer, StreamCounters& counters,
                               ReceiverOptions options)
    : name_(std::move(name)),
      descriptor_(descriptor),
      stream_(stream),
      buffer_(buffer),
      counters_(counters),
      options_(options),
      clock_(options.expect.clockMHz),
      input_(openStreamForReading(descriptor)),
      wake_(eventfd(0, EFD_CLOEXEC)) {
  if (wake_ < 0) throw StreamError(name_ + ": eventfd: " + std::strerror(errno));
  if (!isFile()) {  // more than the stream's default: 50 ms at 10 Gb/s
    const int size = kUdpReceiveBuffer;
    setsockopt(input_->fileDescriptor(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  }
  refs_.reserve(kBatch);
}

PacketReceiver::~PacketReceiver() {
  stop();
  ::close(wake_);
}

void PacketReceiver::start(double clockShift) {
  options_.clockShift = clockShift;
  thread_ = std::thread([this] { run(); });
}

void PacketReceiver::stop() {
  {
    std::lock_guard lock(sleepMutex_);
    stop_ = true;
    sleepCv_.notify_all();
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

uint16_t PacketReceiver::localPort() const {
  if (isFile()) return 0;
  sockaddr_storage address{};
  socklen_t len = sizeof address;
  getsockname(input_->fileDescriptor(), reinterpret_cast<sockaddr*>(&address), &len);
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

double PacketReceiver::firstPacketTime(const std::string& path) {
  StreamDescriptor d;
  d.path = path;
  auto file = openStreamForReading(d);
  std::array<uint8_t, kRspHeaderSize> bytes{};
  if (!file->readExact(bytes.data(), bytes.size()))
    throw StreamError("file:" + path + ": empty recording");
  const RspHeader h = RspHeader::read(bytes.data());
  return SampleClock(h.clockMHz()).unixTime(SampleClock(h.clockMHz()).sampleNumber(h.stamp()));
}

void PacketReceiver::run() {
  try {
    if (isFile()) {
      readFile();
      if (!stop_)
        RTCP_LOG_INFO("ionproc", name_ << ": end of recording after " << counters_.received.load()
                                       << " packets");
    } else {
      receiveUdp();
    }
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("ionproc", name_ << ": input stopped: " << e.what());
  }
  if (options_.recorder) options_.recorder->flush(options_.recordStream);
  buffer_.markEnded(stream_);
}

/// How long a receiver may pause between drains of its socket: up to kUdpCoalesce, but
/// short enough that a quarter of the kernel's receive buffer holds what arrives
/// meanwhile at the rate of the last cycle.
std::chrono::duration<double> coalescingPause(double bytesPerSecond, int receiveBufferBytes) {
  const double safe = bytesPerSecond > 0 ? 0.25 * receiveBufferBytes / bytesPerSecond : 1.0;
  return std::chrono::duration<double>(
      std::min(safe, std::chrono::duration<double>(kUdpCoalesce).count()));
}

void PacketReceiver::receiveUdp() {
  const int fd = input_->fileDescriptor();
  DatagramReceiver datagrams(fd);
  int receiveBuffer = 0;
  socklen_t optionSize = sizeof receiveBuffer;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, &optionSize);
  auto cycleStart = std::chrono::steady_clock::now();
  while (!stop_) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw StreamError(name_ + ": poll: " + std::strerror(errno));
    }
    if (stop_ || fds[1].revents) break;
    double bytes = 0;
    for (;;) {  // drain the socket in batches, then block in poll() again
      const auto batch = datagrams.receive(name_.c_str());
      if (batch.empty()) break;
      bytes += double(datagrams.bytes());
      handle(batch);
      if (!datagrams.filledEveryMessage()) break;
    }
    // Let packets gather before the next poll(): a paced station sends a packet every
    // ~80 us, and a wake-up per packet or two costs more CPU than the packets (the
    // demo's ionproc: 20 s of CPU for 30 s without the pause, 6 s with it).
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - cycleStart).count();
    cycleStart = now;
    const auto pause = coalescingPause(seconds > 0 ? bytes / seconds : 0, receiveBuffer);
    if (pause > std::chrono::microseconds(50)) std::this_thread::sleep_for(pause);
  }
}

void PacketReceiver::readFile() {
  RecordingReader reader(input_->fileDescriptor(), name_);
  std::array<std::span<const uint8_t>, kBatch> batch;
  int count = 0;
  auto flush = [&] {
    handle({batch.data(), size_t(count)});
    count = 0;
  };
  // The batch points into the reader's buffer: flushed before every fill().
  auto more = [&] {
    flush();
    return reader.fill();
  };
  while (!stop_) {
    std::span<const uint8_t> bytes = reader.unread();
    if (bytes.size() < kRspHeaderSize) {
      if (more()) continue;
      if (!bytes.empty())
        RTCP_LOG_WARN("ionproc",
                      name_ << ": recording ends inside the header at byte " << reader.position());
      break;
    }
    const RspHeader h = RspHeader::read(bytes.data());
    const int bits = h.bitsPerSample();
    if (bits == 0) {  // the size of this record is unknown: the rest cannot be found
      ++counters_.received;
      ++counters_.rejected[size_t(RspReject::kBitMode)];
      RTCP_LOG_ERROR("ionproc", name_ << ": record at byte " << reader.position()
                                      << " has an invalid bit mode; cannot find the next packet");
      break;
    }
    const size_t size = rspPacketSize(bits, h.nrBeamlets, h.nrBlocks);
    if (size > bytes.size()) {
      if (more()) continue;
      RTCP_LOG_WARN("ionproc",
                    name_ << ": recording ends inside the record at byte " << reader.position());
      break;
    }
    const std::span<const uint8_t> record = bytes.first(size);
    reader.consume(size);
    if (size > DatagramReceiver::kMaxPacket) {  // larger than any valid packet
      ++counters_.received;
      const RspReject why =
          h.nrBlocks != kRspSamplesPerPacket ? RspReject::kBlockCount : RspReject::kBeamletCount;
      ++counters_.rejected[size_t(why)];
      logReject(why, record.first(kRspHeaderSize));
      continue;
    }
    // A record outside the observation is rejected at once (handle()), not waited for.
    if (options_.paced && outsideObservation(clock_.sampleNumber(h.stamp())) == RspReject::kNone) {
      // Records up to kReplayLead ahead of the wall clock go at once, and a sleep lasts
      // until the record is due (not until it is kReplayLead ahead: then the next record,
      // 82 us later, would be out of reach again and every record cost a wake-up).
      const int64_t sample = clock_.sampleNumber(h.stamp()) + kRspSamplesPerPacket;
      const double due = clock_.unixTime(sample) + options_.clockShift;
      if (due > wallClock() + kReplayLead) {
        flush();  // what is due
        if (!sleepUntil(due)) break;
      }
    }
    batch[size_t(count)] = record;
    if (++count == kBatch) flush();
  }
  flush();
}

RspReject PacketReceiver::outsideObservation(int64_t firstSample) const {
  if (firstSample < options_.firstPlausible) return RspReject::kBeforeObservation;
  if (firstSample >= options_.endPlausible) return RspReject::kAfterObservation;
  return RspReject::kNone;
}

RspReject PacketReceiver::aheadOfClock(int64_t firstSample, double now) const {
  if (options_.maxAheadOfClock >= 0 &&
      clock_.unixTime(firstSample + kRspSamplesPerPacket) + options_.clockShift >
          now + options_.maxAheadOfClock)
    return RspReject::kAheadOfClock;
  return RspReject::kNone;
}

void PacketReceiver::handle(std::span<const std::span<const uint8_t>> datagrams) {
  refs_.clear();
  const double now = options_.maxAheadOfClock >= 0 ? wallClock() : 0;
  for (const auto& datagram : datagrams) {
    RspHeader h;
    RspReject why = validateRspPacket(datagram, options_.expect, h);
    if (why == RspReject::kNone && h.nrBeamlets < options_.neededBeamlets)
      why = RspReject::kBeamletCount;
    const int64_t firstSample = why == RspReject::kNone ? clock_.sampleNumber(h.stamp()) : 0;
    if (why == RspReject::kNone) why = outsideObservation(firstSample);
    if (why == RspReject::kNone) why = aheadOfClock(firstSample, now);
    if (why != RspReject::kNone) {
      ++counters_.rejected[size_t(why)];
      logReject(why, datagram);
      continue;
    }
    refs_.push_back({firstSample, datagram.data() + kRspHeaderSize, h.nrBeamlets});
    if (options_.recorder) options_.recorder->append(options_.recordStream, datagram);
  }
  counters_.received += datagrams.size();
  // Written in runs of packets on the same side of the observation's window, each run's
  // stored packets counted for its side (packets come in time order: mostly one run).
  for (size_t begin = 0; begin < refs_.size();) {
    const int side = windowSide(refs_[begin].firstSample);
    size_t end = begin + 1;
    while (end < refs_.size() && windowSide(refs_[end].firstSample) == side) ++end;
    const WriteCounts counts =
        buffer_.write(stream_, std::span<const PacketRef>(refs_).subspan(begin, end - begin));
    counters_.accepted += counts.written;  // wholly late or duplicated: no data received
    if (side < 0) counters_.acceptedBeforeStart += counts.written;
    if (side > 0) counters_.acceptedAfterStop += counts.written;
    if (counts.late) counters_.late += counts.late;
    if (counts.duplicated) counters_.duplicated += counts.duplicated;
    begin = end;
  }
}

int PacketReceiver::windowSide(int64_t firstSample) const {
  if (firstSample + kRspSamplesPerPacket <= options_.windowStart) return -1;
  return firstSample >= options_.windowEnd ? 1 : 0;
}

bool PacketReceiver::sleepUntil(double unixTime) {
  const auto when = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(unixTime)));
  std::unique_lock lock(sleepMutex_);
  sleepCv_.wait_until(lock, when, [&] { return stop_.load(); });
  return !stop_;
}

void PacketReceiver::logReject(RspReject reason, std::span<const uint8_t> datagram) {
  if (!rejectLog_.allow()) return;
  const uint64_t suppressed = rejectLog_.takeSuppressed();
  if (datagram.size() < kRspHeaderSize) {
    RTCP_LOG_WARN("ionproc", name_ << ": rejected a " << datagram.size()
                                   << "-byte datagram: " << toString(reason) << " (" << suppressed
                                   << " more rejects not logged)");
    return;
  }
  const RspHeader h = RspHeader::read(datagram.data());
  RTCP_LOG_WARN("ionproc",
                name_ << ": rejected packet: " << toString(reason) << " (version " << int(h.version)
                      << ", station field " << h.station << ", bit mode " << (h.sourceInfo2 & 3)
                      << ", clock " << h.clockMHz() << " MHz, beamlets " << int(h.nrBeamlets)
                      << ", blocks " << int(h.nrBlocks) << ", timestamp " << h.timestamp
                      << ", sequence " << h.blockSequenceNumber << ", " << datagram.size()
                      << " bytes; " << suppressed << " more rejects not logged)");
}

}  // namespace rtcp::ion
