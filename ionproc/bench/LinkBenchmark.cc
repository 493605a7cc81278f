// rtcp-bench link: bytes per second from ionproc to a compute core over the link (tcp and
// unix transports, and a forwarded call), against a raw socket of the same transport and
// a raw memcpy of the same size, measured in the same run; and the shared-memory path
// (link/SharedBlockSegment.h: ionproc lends a slot of its segment through a forwarded
// call over the unix socket, the rank reads it in place): the hand-over alone, and with
// the rank copying the lent bytes out (what its exchange does with them anyway).
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "LinkClient.h"
#include "LinkServer.h"
#include "SharedBlockSegment.h"
#include "daemon/CallService.h"
#include "rtcp/Benchmark.h"
#include "rtcp/Handshake.h"

namespace rtcp::ion {
namespace {

/// The handshake both sides of the benchmark's links share.
const rtcp::Handshake& testHandshake() {
  static const rtcp::Handshake handshake(rtcp::ObservationSecret::generate(), 1,
                                         rtcp::ConnectionPurpose::kLink);
  return handshake;
}

RTCP_FORWARDED(benchmarkFetch, void(Out<Span<uint8_t>> data));
RTCP_FORWARDED(benchmarkLend, void(Out<SharedBlockLocation> location));

using Clock = std::chrono::steady_clock;

/// Seconds one run of f takes.
template <typename F>
double timed(F f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Posts reads of the whole source buffer (what serving a block does).
class SendingService : public LinkService {
 public:
  explicit SendingService(const AlignedBuffer<uint8_t>& source) : source_(source) {}
  LinkPosting post(const LinkRequest&) override {
    LinkPosting p;
    p.data = {{const_cast<uint8_t*>(source_.data()), source_.size()}};
    return p;
  }

 private:
  const AlignedBuffer<uint8_t>& source_;
};

/// Raw reference: a connected socket pair of the transport; one thread streams.
struct RawPair {
  LinkListener listener;
  std::unique_ptr<LinkSocket> sender, receiver;
  explicit RawPair(const LinkEndpoint& endpoint) : listener(endpoint) {
    std::thread accept([&] { sender = listener.accept(); });
    receiver = connectLink(listener.endpoint(), 5);
    accept.join();
  }
  void transfer(const AlignedBuffer<uint8_t>& source, AlignedBuffer<uint8_t>& sink) {
    std::thread t([&] { sender->send(source.data(), source.size()); });
    receiver->receive(sink.data(), sink.size());
    t.join();
  }
};

/// The link: ionproc posts the source buffer for every read.
struct LinkPair {
  SendingService service;
  LinkServer server;
  LinkClient client;
  LinkPair(const LinkEndpoint& endpoint, const AlignedBuffer<uint8_t>& source)
      : service(source),
        server(endpoint, service, testHandshake()),
        client(server.endpoint(), 0, 0, testHandshake()) {}
  void transfer(AlignedBuffer<uint8_t>& sink) {
    const uint8_t head[1] = {0};
    client.read(head, sink.data(), sink.size());
  }
};

/// A forwarded call whose output array ionproc lends from the source buffer.
struct ForwardedPair {
  FunctionRegistry functions;
  std::unique_ptr<CallService> calls;
  std::unique_ptr<LinkServer> server;
  std::unique_ptr<LinkClient> client;
  ForwardedPair(const LinkEndpoint& endpoint, const AlignedBuffer<uint8_t>& source) {
    functions.serve(benchmarkFetch,
                    [&source](OutArray<uint8_t>& out) { out.lend(source.span(), nullptr); });
    calls = std::make_unique<CallService>(functions);
    server = std::make_unique<LinkServer>(endpoint, *calls, testHandshake());
    client = std::make_unique<LinkClient>(server->endpoint(), 0, 0, testHandshake());
  }
  ~ForwardedPair() { server->stop(); }
  void transfer(AlignedBuffer<uint8_t>& sink) {
    std::span<uint8_t> data = sink.span();
    benchmarkFetch.call(*client, data);
  }
};

/// The shared-memory path: ionproc lends slot 0 of a segment filled with the source bytes
/// (the lease of the last call ends with the next, as a rank's next fetch ends it).
struct SharedPair {
  SharedBlockSegment segment;
  FunctionRegistry functions;
  std::unique_ptr<CallService> calls;
  std::unique_ptr<LinkServer> server;
  std::unique_ptr<LinkClient> client;
  std::unique_ptr<SharedBlockMapping> mapping;
  size_t bytes;
  SharedPair(const LinkEndpoint& endpoint, const AlignedBuffer<uint8_t>& source)
      : segment(1, source.size()), bytes(source.size()) {
    SharedBlockLocation first = segment.lease(0);
    std::memcpy(segment.slotBytes(first.slot).data(), source.data(), bytes);
    functions.serve(benchmarkLend,
                    [this](SharedBlockLocation& location) { location = segment.lease(0); });
    calls = std::make_unique<CallService>(functions);
    server = std::make_unique<LinkServer>(endpoint, *calls, testHandshake());
    client = std::make_unique<LinkClient>(server->endpoint(), 0, 0, testHandshake());
    mapping = std::make_unique<SharedBlockMapping>(segment.info());
  }
  ~SharedPair() { server->stop(); }
  /// The lent bytes, in place.
  std::span<const uint8_t> handOver() {
    SharedBlockLocation location;
    benchmarkLend.call(*client, location);
    return mapping->slotBytes(location).first(bytes);
  }
  void transfer(AlignedBuffer<uint8_t>& sink) {
    std::memcpy(sink.data(), handOver().data(), bytes);
  }
};

int runLinkBenchmark(int argc, char** argv) {
  int repeats = 10;
  std::vector<size_t> sizesMiB = {8, 64};
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc)
      repeats = std::stoi(argv[++i]);
    else if (arg == "--size" && i + 1 < argc)
      sizesMiB = {size_t(std::stoul(argv[++i]))};
    else {
      std::fprintf(stderr, "usage: rtcp-bench link [--size MiB] [--repeat N]\n");
      return arg == "--help" ? 0 : 1;
    }
  }
  const std::string unixPath = (std::filesystem::temp_directory_path() /
                                ("rtcp-link-bench-" + std::to_string(getpid()) + ".sock"))
                                   .string();
  const LinkEndpoint tcp = LinkEndpoint::parse("tcp:127.0.0.1:0");
  const LinkEndpoint unix = LinkEndpoint::parse("unix:" + unixPath);
  for (size_t mib : sizesMiB) {
    const size_t bytes = mib << 20;
    AlignedBuffer<uint8_t> source(bytes), sink(bytes);
    for (size_t i = 0; i < bytes; ++i) source[i] = uint8_t(i * 7);
    const std::string p = "link." + std::to_string(mib) + "MiB.";
    RawPair rawTcpPair(tcp), rawUnixPair(unix);
    LinkPair linkTcpPair(tcp, source);
    LinkPair linkUnixPair(LinkEndpoint::parse(unix.toString() + ".link"), source);
    ForwardedPair forwardedPair(LinkEndpoint::parse(unix.toString() + ".call"), source);
    SharedPair sharedPair(LinkEndpoint::parse(unix.toString() + ".shm"), source);
    // Interleaved, best of each: the machine is shared, so load hits all alike.
    double memcpyTime = 1e9, rawTcpTime = 1e9, rawUnixTime = 1e9, linkTcpTime = 1e9,
           linkUnixTime = 1e9, forwardedTime = 1e9, handOverTime = 1e9, sharedTime = 1e9;
    for (int r = 0; r < repeats; ++r) {
      memcpyTime =
          std::min(memcpyTime, timed([&] { std::memcpy(sink.data(), source.data(), bytes); }));
      rawTcpTime = std::min(rawTcpTime, timed([&] { rawTcpPair.transfer(source, sink); }));
      linkTcpTime = std::min(linkTcpTime, timed([&] { linkTcpPair.transfer(sink); }));
      rawUnixTime = std::min(rawUnixTime, timed([&] { rawUnixPair.transfer(source, sink); }));
      linkUnixTime = std::min(linkUnixTime, timed([&] { linkUnixPair.transfer(sink); }));
      forwardedTime = std::min(forwardedTime, timed([&] { forwardedPair.transfer(sink); }));
      handOverTime = std::min(handOverTime, timed([&] { sharedPair.handOver(); }));
      sharedTime = std::min(sharedTime, timed([&] { sharedPair.transfer(sink); }));
    }
    const double memcpyRate = double(bytes) / memcpyTime, rawTcp = double(bytes) / rawTcpTime,
                 rawUnix = double(bytes) / rawUnixTime, linkTcp = double(bytes) / linkTcpTime,
                 linkUnix = double(bytes) / linkUnixTime,
                 forwardedUnix = double(bytes) / forwardedTime;
    if (std::memcmp(source.data(), sink.data(), bytes) != 0)
      throw std::runtime_error("data corrupted");
    const double handOver = double(bytes) / handOverTime, shared = double(bytes) / sharedTime;
    printFigure(p + "memcpy_bytes_per_second", memcpyRate);
    printFigure(p + "tcp.bytes_per_second", linkTcp);
    printFigure(p + "tcp.fraction_of_raw_socket", linkTcp / rawTcp);
    printFigure(p + "unix.bytes_per_second", linkUnix);
    printFigure(p + "unix.fraction_of_raw_socket", linkUnix / rawUnix);
    printFigure(p + "unix.fraction_of_memcpy", linkUnix / memcpyRate);
    printFigure(p + "forwarded_call.unix.fraction_of_raw_socket", forwardedUnix / rawUnix);
    printFigure(p + "raw_unix_over_raw_tcp", rawUnix / rawTcp);
    printFigure(p + "shared_memory.handover_bytes_per_second", handOver);
    printFigure(p + "shared_memory.handover_seconds", handOverTime);
    printFigure(p + "shared_memory.with_copy_out.bytes_per_second", shared);
    printFigure(p + "shared_memory.with_copy_out.fraction_of_memcpy", shared / memcpyRate);
    printFigure(p + "shared_memory.with_copy_out_over_unix_link", shared / linkUnix);
  }
  return 0;
}

RTCP_REGISTER_BENCHMARK("link", "ionproc -> compute link throughput vs raw socket and memcpy",
                        runLinkBenchmark);

}  // namespace
}  // namespace rtcp::ion
