#include "InputRecorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "rtcp/Stream.h"

namespace rtcp::ion {

InputRecorder::InputRecorder(RecorderOptions options, const std::vector<std::string>& fileNames)
    : options_(std::move(options)) {
  if (options_.chunkBytes == 0 || options_.bufferBytes < options_.chunkBytes)
    throw std::invalid_argument("recorder: a buffer of " + std::to_string(options_.bufferBytes) +
                                " bytes holds no chunk of " + std::to_string(options_.chunkBytes));
  std::error_code error;
  std::filesystem::create_directories(options_.directory, error);
  if (error)
    throw StreamError("recording directory " + options_.directory + ": " + error.message());
  ::chmod(options_.directory.c_str(), 0750);  // the observation's owner and group only
  for (const std::string& name : fileNames) {
    auto s = std::make_unique<StreamState>();
    s->path = options_.directory + "/" + name;
    s->fd = ::open(s->path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (s->fd < 0) {
      const std::string why = std::strerror(errno);
      for (auto& opened : streams_) ::close(opened->fd);
      throw StreamError("recording " + s->path + ": " + why +
                        (errno == EEXIST ? " (a recording is never overwritten)" : ""));
    }
    streams_.push_back(std::move(s));
  }
  for (size_t i = 0; i < options_.bufferBytes / options_.chunkBytes; ++i) {
    auto chunk = std::make_unique<Chunk>();
    chunk->bytes = AlignedBuffer<uint8_t, kDirectIoAlignment>(options_.chunkBytes);  // faulted in
    pool_.add(std::move(chunk));
  }
  writer_ = std::thread([this] { writeChunks(); });
}

InputRecorder::~InputRecorder() { finish(); }

bool InputRecorder::takeChunk(StreamState& s, int stream, size_t bytes) {
  if (boundReached_.load(std::memory_order_relaxed)) {
    ++s.overBound;
    return false;
  }
  std::optional<std::unique_ptr<Chunk>> chunk =
      options_.waitForBuffer ? pool_.free.pop() : pool_.free.popFor(std::chrono::seconds(0));
  if (!chunk) {
    ++s.noBuffer;
    return false;
  }
  uint64_t before = granted_.load(std::memory_order_relaxed), grant = 0;
  do {
    grant = std::min<uint64_t>(options_.chunkBytes, options_.maxBytes - before);
    if (grant < bytes) {
      boundReached_ = true;
      pool_.free.push(std::move(*chunk));
      ++s.overBound;
      RTCP_LOG_WARN("ionproc", "recording: the bound of " << options_.maxBytes
                                                          << " bytes is reached; further "
                                                             "packets are counted, not recorded");
      return false;
    }
  } while (!granted_.compare_exchange_weak(before, before + grant));
  (*chunk)->used = 0;
  (*chunk)->limit = size_t(grant);
  (*chunk)->packets = 0;
  (*chunk)->stream = stream;
  s.current = std::move(*chunk);
  return true;
}

void InputRecorder::append(int stream, std::span<const uint8_t> packet) {
  StreamState& s = *streams_[size_t(stream)];
  if (s.current && s.current->used + packet.size() > s.current->limit) handOver(s);
  if (!s.current && !takeChunk(s, stream, packet.size())) return;
  Chunk& c = *s.current;
  std::memcpy(c.bytes.data() + c.used, packet.data(), packet.size());
  c.used += packet.size();
  ++c.packets;
}

void InputRecorder::handOver(StreamState& s) {
  if (!s.current) return;
  if (s.current->used) {
    pool_.filled.push(std::move(s.current));
  } else {
    pool_.free.push(std::move(s.current));
  }
  s.current.reset();
}

void InputRecorder::flush(int stream) { handOver(*streams_[size_t(stream)]); }

void InputRecorder::writeChunks() {
  while (std::optional<std::unique_ptr<Chunk>> chunk = pool_.filled.pop()) {
    Chunk& c = **chunk;
    StreamState& s = *streams_[size_t(c.stream)];
    size_t done = 0;
    int error = 0;
    while (done < c.used) {
      const ssize_t n = ::write(s.fd, c.bytes.data() + done, c.used - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? errno : ENOSPC;
        break;
      }
      done += size_t(n);
    }
    if (error) {
      // The packets written partly are cut off again, so that the recording stays whole.
      if (done && ::ftruncate(s.fd, off_t(s.bytes.load())) == 0)
        ::lseek(s.fd, off_t(s.bytes.load()), SEEK_SET);
      s.writeFailed += c.packets;
      if (failureLog_.allow())
        RTCP_LOG_ERROR("ionproc", "recording " << s.path << ": " << std::strerror(error) << "; "
                                               << c.packets << " packets not recorded ("
                                               << failureLog_.takeSuppressed()
                                               << " more failures not logged)");
    } else {
      s.packets += c.packets;
      s.bytes += c.used;
    }
    pool_.free.push(std::move(*chunk));
  }
}

void InputRecorder::finish() {
  if (finished_) return;
  finished_ = true;
  for (int k = 0; k < nrStreams(); ++k) flush(k);
  pool_.filled.close();
  if (writer_.joinable()) writer_.join();
  for (auto& s : streams_) {
    if (s->fd >= 0 && ::close(s->fd) != 0)
      RTCP_LOG_ERROR("ionproc", "recording " << s->path << ": close: " << std::strerror(errno));
    s->fd = -1;
  }
}

RecordingCounts InputRecorder::counts(int stream) const {
  const StreamState& s = *streams_[size_t(stream)];
  RecordingCounts c;
  c.path = s.path;
  c.packets = s.packets;
  c.bytes = s.bytes;
  c.noBuffer = s.noBuffer;
  c.overBound = s.overBound;
  c.writeFailed = s.writeFailed;
  return c;
}

const std::string& InputRecorder::path(int stream) const { return streams_[size_t(stream)]->path; }

}  // namespace rtcp::ion
