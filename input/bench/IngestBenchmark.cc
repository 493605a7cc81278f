// rtcp-bench ingest: RSP packets per second and Gb/s that one receiving thread (recvmmsg,
// validation, circular buffer) sustains from a local UDP sender thread, at full speed and
// paced at rising rates to find the highest loss-free rate; and the CPU seconds per GB
// that input costs, live (UDP) and replayed (a recording read as fast as it goes), and
// what serving blocks out of the buffer costs, copied or lent in place.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "CircularSampleBuffer.h"
#include "InputRecorder.h"
#include "PacketReceiver.h"
#include "rtcp/Benchmark.h"
#include "rtcp/Logger.h"
#include "rtcp/Stream.h"

namespace rtcp::ion {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBits = 16;
constexpr int kBeamlets = 61;
constexpr int kStationId = 1;
constexpr int kSendBatch = 32;

/// Sends prebuilt 16-bit 61-beamlet packets with advancing time stamps: one datagram per
/// message of a sendmmsg (each passes the kernel's network stack on its own, as packets
/// from a network card without GRO do), or segmented: as station-sim sends them, groups
/// in one send each (Stream::writeEach), which reach the receiver's socket as one buffer.
class Sender {
 public:
  Sender(uint16_t port, bool segmented)
      : clock_(200),
        fd_(::socket(AF_INET, SOCK_DGRAM, 0)),
        segmented_(segmented ? openStreamForWriting(
                                   StreamDescriptor::parse("udp:127.0.0.1:" + std::to_string(port)))
                             : nullptr) {
    if (fd_ < 0) throw std::runtime_error("ingest: cannot create the sending socket");
    const int size = 32 << 20;
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
      throw std::runtime_error("ingest: cannot connect the sending socket");
    RspHeader h;
    h.setClockMHz(200);
    h.setBitsPerSample(kBits);
    h.setStationId(kStationId);
    h.nrBeamlets = kBeamlets;
    std::vector<std::complex<int16_t>> samples(size_t(kBeamlets) * 16 * 2);
    for (size_t i = 0; i < samples.size(); ++i) samples[i] = {int16_t(i), int16_t(-int(i))};
    packets_.assign(size_t(kSendBatch) * packetSize(), 0);  // [packet][byte]
    for (int i = 0; i < kSendBatch; ++i) {
      encodeRspPacket(h, samples.data(), packet(i));
      iov_[i] = {packet(i), packetSize()};
      messages_[i] = {};
      messages_[i].msg_hdr.msg_iov = &iov_[i];
      messages_[i].msg_hdr.msg_iovlen = 1;
    }
    next_ = clock_.secondStart(1700000000);
  }
  ~Sender() { ::close(fd_); }

  static size_t packetSize() { return rspPacketSize(kBits, kBeamlets); }

  /// Sends for `seconds` at `rate` packets/s (0: as fast as possible); returns packets sent.
  uint64_t run(double seconds, double rate) {
    uint64_t sent = 0;
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    for (auto now = start; now < end; now = Clock::now()) {
      for (int i = 0; i < kSendBatch; ++i) {
        RspHeader h = RspHeader::read(packet(i));
        const RspStamp stamp = clock_.stamp(next_);
        h.timestamp = stamp.timestamp;
        h.blockSequenceNumber = stamp.sequence;
        h.write(packet(i));
        next_ += kRspSamplesPerPacket;
      }
      if (segmented_) {
        segmented_->writeEach(packet(0), packetSize(), kSendBatch);  // 8 to a send
        sent += kSendBatch;
      } else {
        const int n = ::sendmmsg(fd_, messages_.data(), kSendBatch, 0);
        if (n > 0) sent += uint64_t(n);
      }
      if (rate > 0)
        std::this_thread::sleep_until(start + std::chrono::duration<double>(sent / rate));
    }
    return sent;
  }

 private:
  uint8_t* packet(int i) { return packets_.data() + size_t(i) * packetSize(); }

  SampleClock clock_;
  int fd_;
  std::unique_ptr<Stream> segmented_;
  int64_t next_;
  std::vector<uint8_t> packets_;
  std::array<iovec, kSendBatch> iov_{};
  std::array<mmsghdr, kSendBatch> messages_{};
};

/// One measurement: packets sent and received (after draining) at a rate, and the CPU
/// time the receiving thread spent (the process's minus this sending thread's).
struct Trial {
  uint64_t sent = 0;
  uint64_t received = 0;
  double seconds = 0;
  double receiverCpu = 0;
};

/// A recording of `bytes` of valid packets written to a temporary file (so in the page
/// cache, as a replay's recordings are); removed when done.
class TemporaryRecording {
 public:
  explicit TemporaryRecording(size_t bytes)
      : path_(std::filesystem::temp_directory_path() /
              ("rtcp-ingest-" + std::to_string(::getpid()) + ".rsp")) {
    const SampleClock clock(200);
    RspHeader h;
    h.setClockMHz(200);
    h.setBitsPerSample(kBits);
    h.setStationId(kStationId);
    h.nrBeamlets = kBeamlets;
    std::vector<std::complex<int16_t>> samples(size_t(kBeamlets) * 16 * 2, {3, -3});
    std::vector<uint8_t> packet(rspPacketSize(kBits, kBeamlets));
    std::ofstream out(path_, std::ios::binary);
    int64_t next = clock.secondStart(1700000000);
    for (size_t written = 0; written < bytes; written += packet.size()) {
      const RspStamp stamp = clock.stamp(next);
      h.timestamp = stamp.timestamp;
      h.blockSequenceNumber = stamp.sequence;
      encodeRspPacket(h, samples.data(), packet.data());
      out.write(reinterpret_cast<const char*>(packet.data()), std::streamsize(packet.size()));
      next += kRspSamplesPerPacket;
      ++packets_;
    }
    if (!out) throw std::runtime_error("ingest: cannot write " + path_.string());
  }
  ~TemporaryRecording() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }
  uint64_t packets() const { return packets_; }

 private:
  std::filesystem::path path_;
  uint64_t packets_ = 0;
};

/// What the benchmark's PacketReceiver writes into and counts: half a second of the
/// station's beamlets (faulted in), and the options that accept its packets.
struct ReceiverTarget {
  CircularSampleBuffer buffer{
      kBeamlets, kBits, int64_t(0.5 * SampleClock(200).sampleRate()), {{0, kBeamlets}}, false};
  StreamCounters counters;
  ReceiverOptions options;

  ReceiverTarget() {
    buffer.populate();
    options.expect = {200, kBits, kBeamlets, kStationId};
    options.neededBeamlets = kBeamlets;
  }
};

/// Replays a recording through a PacketReceiver as fast as it goes; CPU seconds per GB of
/// the whole process (the receiver, and with `recorder` its writer thread too).
double replayedCpuSecondsPerGb(size_t bytes, InputRecorder* recorder = nullptr) {
  const TemporaryRecording recording(bytes);
  ReceiverTarget target;
  target.options.recorder = recorder;
  const StreamCounters& counters = target.counters;
  StreamDescriptor file;
  file.path = recording.path();
  PacketReceiver receiver("ingest file", file, 0, target.buffer, target.counters, target.options);
  const double cpu0 = processCpuSeconds();
  receiver.start();
  while (counters.received < recording.packets())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  receiver.stop();
  if (recorder) recorder->finish();  // what is still queued is written: counted too
  const double cpu = processCpuSeconds() - cpu0;
  if (counters.accepted != recording.packets())
    throw std::runtime_error("ingest: the replay accepted " + std::to_string(counters.accepted) +
                             " of " + std::to_string(recording.packets()) + " packets");
  return cpu / (double(recording.packets()) * double(rspPacketSize(kBits, kBeamlets)) / 1e9);
}

/// How serveCpuSecondsPerGb serves a block.
enum class Serve {
  kCopy,    ///< the rows copied into a block (ionproc over the socket, or into a shared slot)
  kLend,    ///< lent in place (valid bits and row offsets only: ionproc's shared ring)
  kLevels,  ///< the view across subbands' pass: each row's power, in place (rowPower)
};

/// Serving blocks out of a full buffer, CPU seconds per GB of the block's rows.
double serveCpuSecondsPerGb(Serve serve) {
  const SampleClock clock(200);
  const int64_t capacity = int64_t(0.5 * clock.sampleRate());
  constexpr int64_t kFirst = 1 << 20;         // any sample number; placed in slot 0 (no wrap)
  constexpr int kBlockSamples = 49152 + 960;  // 0.25 s of 64 channels, with history
  const int64_t rounded = CircularSampleBuffer::roundedCapacity(capacity);
  AlignedBuffer<uint8_t> memory(CircularSampleBuffer::bytesFor(kBeamlets, kBits, capacity, 0));
  CircularSampleBuffer buffer(kBeamlets, kBits, capacity, {{0, kBeamlets}}, false,
                              {memory.data(), rounded - kFirst % rounded, 0});
  std::vector<uint8_t> payload(size_t(kBeamlets) * 16 * bytesPerDualPolSample(kBits), 1);
  std::vector<PacketRef> packets;
  for (int64_t n = kFirst; n < kFirst + buffer.capacity(); n += 16)
    packets.push_back({n, payload.data(), kBeamlets});
  buffer.write(0, packets);

  StationBlock copied(kBeamlets, kBlockSamples, kBits);
  AlignedBuffer<uint8_t> table(StationBlock::bytesOfRowTable(kBeamlets, kBlockSamples));
  StationBlock lent = StationBlock::overRowTable(table.data(), kBeamlets, kBlockSamples, kBits);
  const int64_t room = buffer.capacity() - kBlockSamples;
  const int nrBlocks = 64;
  const double cpu0 = threadCpuSeconds();
  for (int b = 0; b < nrBlocks; ++b) {
    const int64_t first = kFirst + (int64_t(b) * 4099) % room;  // read positions wander
    if (serve == Serve::kLend) {
      buffer.lend(0, first, kBlockSamples, 0, kBeamlets, lent, 0);
      buffer.unpin(0, first);
    } else if (serve == Serve::kCopy) {
      buffer.read(0, first, kBlockSamples, 0, kBeamlets, copied, 0);
    } else {
      double sum = 0;
      for (int row = 0; row < kBeamlets; ++row)  // as StationInput asks, a block's samples
        sum += buffer.power(0, row, first, kBlockSamples, levelWordStride(kBlockSamples)).sum;
      if (!(sum > 0)) throw std::runtime_error("ingest: the levels' pass found no power");
    }
  }
  const double cpu = threadCpuSeconds() - cpu0;
  return cpu / (double(nrBlocks) * double(copied.samples.size()) / 1e9);
}

/// Live input through one PacketReceiver from a local Sender: at full speed, then at rising
/// paced rates up to the highest without loss. Prints the figures under prefix; returns the
/// receiving thread's CPU seconds per GB at full speed.
double measureLive(double seconds, bool segmented, double memcpyGbps, const std::string& prefix) {
  ReceiverTarget target;
  const StreamCounters& counters = target.counters;
  PacketReceiver receiver("ingest", StreamDescriptor::parse("udp:127.0.0.1:0"), 0, target.buffer,
                          target.counters, target.options);
  receiver.start();
  Sender sender(receiver.localPort(), segmented);
  const double bitsPerPacket = 8.0 * double(Sender::packetSize());

  auto trial = [&](double duration, double rate) {
    const uint64_t before = counters.accepted;
    const double cpu0 = processCpuSeconds() - threadCpuSeconds();
    const auto start = Clock::now();
    Trial t;
    t.sent = sender.run(duration, rate);
    t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // drain the socket
    t.received = counters.accepted - before;
    t.receiverCpu = processCpuSeconds() - threadCpuSeconds() - cpu0;
    return t;
  };

  const Trial full = trial(seconds, 0);
  const double fullPps = full.received / full.seconds;
  // Rising paced rates until packets are lost or the sender cannot keep up.
  double lossFree = 0;
  bool senderLimited = true;
  for (double rate = 20000; rate < 2e6; rate *= 1.3) {
    const Trial t = trial(0.5, rate);
    if (t.received < t.sent) {
      senderLimited = false;
      break;
    }
    lossFree = t.sent / t.seconds;
    if (lossFree < 0.9 * rate) break;
  }
  receiver.stop();
  const double corePps = full.receiverCpu > 0 ? full.received / full.receiverCpu : 0;
  const double cpuPerGb =
      full.received ? full.receiverCpu / (double(full.received) * bitsPerPacket / 8e9) : 0;
  printFigure(prefix + "full_speed_packets_per_second", fullPps);
  printFigure(prefix + "full_speed_gbps", fullPps * bitsPerPacket / 1e9);
  printFigure(prefix + "full_speed_loss_fraction",
              full.sent ? double(full.sent - full.received) / double(full.sent) : 0.0);
  printFigure(prefix + "receiver_cpu_fraction", full.receiverCpu / full.seconds);
  printFigure(prefix + "receiver_core_packets_per_second", corePps);
  printFigure(prefix + "receiver_core_gbps", corePps * bitsPerPacket / 1e9);
  printFigure(prefix + "loss_free_packets_per_second", lossFree);
  printFigure(prefix + "loss_free_gbps", lossFree * bitsPerPacket / 1e9);
  printFigure(prefix + "loss_free_limited_by", senderLimited ? "sender" : "receiver");
  printFigure(prefix + "receiver_core_fraction_of_memcpy",
              corePps * bitsPerPacket / 1e9 / memcpyGbps);
  printFigure(prefix + "live_cpu_seconds_per_gb", cpuPerGb);
  printFigure(prefix + "rejected_or_late",
              double(counters.late + counters.duplicated + counters.received - counters.accepted));
  return cpuPerGb;
}

/// The replay with and without a recording of its packets written behind (InputRecorder
/// into a temporary directory): the recording's CPU per GB, and what it could not take.
void measureRecording(double replayMb) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rtcp-ingest-record-" + std::to_string(::getpid()));
  const double plain = replayedCpuSecondsPerGb(size_t(replayMb * 1e6));
  double recorded = 0;
  RecordingCounts counts;
  {
    RecorderOptions options;
    options.directory = dir.string();
    InputRecorder recorder(options, {"ingest-0.rsp"});
    recorded = replayedCpuSecondsPerGb(size_t(replayMb * 1e6), &recorder);
    counts = recorder.counts(0);
  }
  std::filesystem::remove_all(dir);
  printFigure("ingest.record.replayed_cpu_seconds_per_gb", plain);
  printFigure("ingest.record.replayed_recorded_cpu_seconds_per_gb", recorded);
  printFigure("ingest.record.cpu_seconds_per_gb", recorded - plain);
  printFigure("ingest.record.cpu_fraction_of_input", recorded / plain);
  printFigure("ingest.record.packets_written", double(counts.packets));
  printFigure("ingest.record.packets_not_recorded", double(counts.notRecorded()));
}

int runIngest(int argc, char** argv) {
  double seconds = 1.0;
  double replayMb = 512;
  bool record = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help") {
      std::printf(
          "rtcp-bench ingest [--seconds S] [--replay-mb MB] [--record]: UDP ingest rate of one "
          "receiving thread, for packets sent one by one and in station-sim's segmented groups; "
          "CPU s per GB of live and replayed input; --record: only the replay, with and without "
          "its packets recorded behind the input (InputRecorder)\n");
      return 0;
    }
    if (arg == "--record") record = true;
    if (arg == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    if (arg == "--replay-mb" && i + 1 < argc) replayMb = std::stod(argv[++i]);
  }
  if (record) {
    printFigure("ingest.packet_bytes", double(Sender::packetSize()));
    measureRecording(replayMb);
    return 0;
  }
  const double reference = measureMemcpyGbps();
  printFigure("ingest.packet_bytes", double(Sender::packetSize()));
  printFigure("ingest.memcpy_gbps_one_thread", reference);
  // Packets one by one (as a network card delivers them without GRO), then in groups.
  const double single = measureLive(seconds, false, reference, "ingest.");
  const double grouped = measureLive(seconds, true, reference, "ingest.segmented.");
  printFigure("ingest.segmented_cpu_fraction_of_single", grouped / single);
  const double replayed = replayedCpuSecondsPerGb(size_t(replayMb * 1e6));
  printFigure("ingest.replayed_cpu_seconds_per_gb", replayed);
  const double copy = serveCpuSecondsPerGb(Serve::kCopy);
  printFigure("ingest.serve_copy_cpu_seconds_per_gb", copy);
  printFigure("ingest.serve_lend_cpu_seconds_per_gb", serveCpuSecondsPerGb(Serve::kLend));
  // The view across subbands (SubbandLevelFlagger.h): one pass over every row of a block,
  // against what ionproc's input costs now for the same bytes (received, then served).
  const double levels = serveCpuSecondsPerGb(Serve::kLevels);
  printFigure("ingest.subband_levels_cpu_seconds_per_gb", levels);
  printFigure("ingest.subband_levels_fraction_of_input", levels / (replayed + copy));
  // The same bytes copied once by one thread: what the input's copy into its buffer costs.
  printFigure("ingest.memcpy_cpu_seconds_per_gb", 8.0 / reference);
  return 0;
}

RTCP_REGISTER_BENCHMARK("ingest", "UDP packets/s and Gb/s one receiving thread sustains",
                        runIngest);

}  // namespace
}  // namespace rtcp::ion
