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
    s->fd = ::open(s->path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0640);
    s->direct = s->fd >= 0;
    if (s->fd < 0 && errno == EINVAL)  // a file system without direct I/O (tmpfs)
      s->fd = ::open(s->path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (s->fd < 0) {
      const std::string why = std::strerror(errno);
      for (auto& opened : streams_) ::close(opened->fd);
      throw StreamError("recording " + s->path + ": " + why +
                        (errno == EEXIST ? " (a recording is never overwritten)" : ""));
    }
    streams_.push_back(std::move(s));
  }
  // One mapping for all chunks (from 8 MB: huge pages, faulted in now): the kernel pins a
  // direct write's pages far cheaper in huge pages than in the heap's 4 KiB ones.
  const size_t stride = options_.chunkBytes + kDirectIoAlignment;
  const size_t nrChunks = options_.bufferBytes / options_.chunkBytes;
  arena_ = AlignedBuffer<uint8_t, kDirectIoAlignment>(nrChunks * stride);
  for (size_t i = 0; i < nrChunks; ++i) {
    auto chunk = std::make_unique<Chunk>();
    chunk->bytes = arena_.data() + i * stride;
    pool_.add(std::move(chunk));
  }
  staging_ = AlignedBuffer<uint8_t, kDirectIoAlignment>(options_.chunkBytes + kDirectIoAlignment);
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
  (*chunk)->lead = size_t(s.appended % kDirectIoAlignment);
  (*chunk)->used = (*chunk)->lead;
  (*chunk)->limit = (*chunk)->lead + size_t(grant);
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
  std::memcpy(c.bytes + c.used, packet.data(), packet.size());
  c.used += packet.size();
  s.appended += packet.size();
  ++c.packets;
}

void InputRecorder::handOver(StreamState& s) {
  if (!s.current) return;
  if (s.current->used > s.current->lead) {
    pool_.filled.push(std::move(s.current));
  } else {
    pool_.free.push(std::move(s.current));
  }
  s.current.reset();
}

void InputRecorder::flush(int stream) { handOver(*streams_[size_t(stream)]); }

bool InputRecorder::writeAll(int fd, const uint8_t* data, size_t bytes, int& error) {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, data + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      return false;
    }
    done += size_t(n);
  }
  return true;
}

bool InputRecorder::reserveBlock(int fd, uint64_t offset, int& error) {
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, off_t(offset), off_t(kDirectIoAlignment)) == 0 ||
      errno == EOPNOTSUPP)
    return true;
  error = errno;
  return false;
}

bool InputRecorder::writeChunk(StreamState& s, Chunk& c, int& error) {
  const size_t packetBytes = c.used - c.lead;
  if (!s.direct) {
    if (writeAll(s.fd, c.bytes + c.lead, packetBytes, error))
      return (s.onDisk += packetBytes), true;
  } else {
    // Direct I/O takes whole blocks: the tail of the last chunk, this chunk, and the bytes
    // after the last whole block wait for the next (or for finish()). The tail goes into
    // the room the chunk kept for it; only after a failed write, when the tail is not what
    // the chunk expected, both are copied into the staging buffer.
    uint8_t* data = c.bytes;
    const size_t n = s.tail.size() + packetBytes;
    if (s.tail.size() != c.lead) {
      data = staging_.data();
      std::memcpy(data + s.tail.size(), c.bytes + c.lead, packetBytes);
    }
    if (!s.tail.empty()) std::memcpy(data, s.tail.data(), s.tail.size());
    const size_t whole = n / kDirectIoAlignment * kDirectIoAlignment;
    if (writeAll(s.fd, data, whole, error)) {
      if (whole > 0 && whole < n && !reserveBlock(s.fd, s.onDisk + whole, error)) {
        cutBack(s);  // no room for the new tail's block: the chunk is not recorded
        return false;
      }
      s.tail.assign(data + whole, data + n);
      s.onDisk += whole;
      return true;
    }
    if (error == EINVAL && ::fcntl(s.fd, F_SETFL, ::fcntl(s.fd, F_GETFL) & ~O_DIRECT) == 0) {
      s.direct = false;  // opened, but not written so: through the page cache from here on
      s.tail.clear();
      ::lseek(s.fd, off_t(s.onDisk), SEEK_SET);
      if (writeAll(s.fd, data, n, error)) return (s.onDisk += n), true;
    }
  }
  cutBack(s);
  return false;
}

void InputRecorder::cutBack(StreamState& s) {
  if (::ftruncate(s.fd, off_t(s.onDisk)) == 0) ::lseek(s.fd, off_t(s.onDisk), SEEK_SET);
  int ignored = 0;  // the cut freed the tail's reserved block: taken again (room was just freed)
  if (s.direct && !s.tail.empty() && !reserveBlock(s.fd, s.onDisk, ignored))
    RTCP_LOG_WARN("ionproc",
                  "recording " << s.path << ": no room for its last " << s.tail.size() << " bytes");
}

void InputRecorder::writeChunks() {
  while (std::optional<std::unique_ptr<Chunk>> chunk = pool_.filled.pop()) {
    Chunk& c = **chunk;
    StreamState& s = *streams_[size_t(c.stream)];
    int error = 0;
    if (writeChunk(s, c, error)) {
      s.packets += c.packets;
      s.bytes += c.used - c.lead;
    } else {
      s.writeFailed += c.packets;
      if (failureLog_.allow())
        RTCP_LOG_ERROR("ionproc", "recording " << s.path << ": " << std::strerror(error) << "; "
                                               << c.packets << " packets not recorded ("
                                               << failureLog_.takeSuppressed()
                                               << " more failures not logged)");
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
    int error = 0;  // a direct recording's last bytes, written through the page cache
    if (s->fd >= 0 && !s->tail.empty() &&
        (::fcntl(s->fd, F_SETFL, ::fcntl(s->fd, F_GETFL) & ~O_DIRECT) != 0 ||
         !writeAll(s->fd, s->tail.data(), s->tail.size(), error)))
      RTCP_LOG_ERROR("ionproc", "recording " << s->path << ": its last " << s->tail.size()
                                             << " bytes could not be written: "
                                             << std::strerror(error ? error : errno));
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
