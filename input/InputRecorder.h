#pragma once
/// \file InputRecorder.h
/// Recordings written behind the input: RSP packets appended to one recording per stream
/// (DESIGN §2.1: the packets as they came off the wire, concatenated), station-sim's
/// format, which a parset input `file:PATH` replays. The receivers copy each packet into
/// a preallocated chunk of their stream (no system call, no allocation: the one copy); a
/// full chunk goes to a writer thread that writes it to disk from where it lies and returns
/// it to the pool, with direct I/O where the file system has it (O_DIRECT: through the page
/// cache a GB cost 2.3 CPU s of kernel time on a paravirtualised guest, direct 0.24;
/// docs/PERFORMANCE.md §4). The input never waits on the disk: a packet that finds no free
/// chunk (the disk is slower than the input), would pass the bound on disk use, or whose
/// chunk could not be written (a full disk) is counted, not recorded; a recording holds
/// whole packets whatever the disk does. ionproc records its live input with it (`--record-input`)
/// and writes triggered dumps with it (TriggerService), there waiting for the disk instead.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/Logger.h"
#include "rtcp/Queue.h"

namespace rtcp::ion {

struct RecorderOptions {
  std::string directory;                   ///< made if absent (mode 0750)
  uint64_t maxBytes = UINT64_MAX;          ///< bound on the bytes written over all recordings
  size_t bufferBytes = size_t(256) << 20;  ///< preallocated chunks, over all streams
  size_t chunkBytes = size_t(1) << 20;     ///< one write() each
  /// Wait for a free chunk rather than drop packets (a dump: not on the input path).
  bool waitForBuffer = false;
};

/// What became of one recording's packets.
struct RecordingCounts {
  std::string path;
  uint64_t packets = 0;      ///< written to disk
  uint64_t bytes = 0;        ///< written to disk
  uint64_t noBuffer = 0;     ///< not recorded: no free chunk (the disk slower than the input)
  uint64_t overBound = 0;    ///< not recorded: beyond RecorderOptions::maxBytes
  uint64_t writeFailed = 0;  ///< not recorded: their chunk's write failed (a full disk)
  uint64_t notRecorded() const { return noBuffer + overBound + writeFailed; }
};

/// The recording of input stream k (RSP.ports entry k) of an antenna field: "CS001LBA-0.rsp".
inline std::string recordingFileName(const std::string& field, int stream) {
  return field + "-" + std::to_string(stream) + ".rsp";
}

class InputRecorder {
 public:
  /// Creates (never overwrites) directory/fileNames[k] for stream k; throws StreamError
  /// naming the file. Preallocates the chunks and starts the writer thread.
  InputRecorder(RecorderOptions options, const std::vector<std::string>& fileNames);
  ~InputRecorder();
  InputRecorder(const InputRecorder&) = delete;
  InputRecorder& operator=(const InputRecorder&) = delete;

  /// Appends one packet to stream k's recording. Each stream has one appending thread.
  void append(int stream, std::span<const uint8_t> packet);
  /// Hands stream k's partly filled chunk to the writer (its appending thread, or after
  /// that stopped).
  void flush(int stream);
  /// Flushes every stream, writes everything queued and closes the files; only once no
  /// thread appends any more. Idempotent.
  void finish();

  int nrStreams() const { return int(streams_.size()); }
  RecordingCounts counts(int stream) const;
  const std::string& path(int stream) const;

 private:
  /// A stream's packets [lead, used), after room for the bytes its previous chunk left
  /// over a whole direct-I/O block (`lead`: what the stream appended before, modulo
  /// kDirectIoAlignment), which the writer fills in from the stream's tail: the chunk is
  /// then written from where it lies, the packets copied once (docs/PERFORMANCE.md §4).
  struct Chunk {
    uint8_t* bytes = nullptr;  ///< chunkBytes + kDirectIoAlignment in arena_, 4 KiB aligned
    size_t lead = 0;
    size_t used = 0;
    size_t limit = 0;  ///< lead + bytes granted under the bound
    uint64_t packets = 0;
    int stream = 0;
  };
  struct alignas(64) StreamState {  ///< one cache line apart: receivers on other cores
    std::string path;
    int fd = -1;
    std::unique_ptr<Chunk> current;  ///< its appending thread's
    uint64_t appended = 0;           ///< its appending thread's: bytes put into chunks
    bool direct = false;             ///< opened with O_DIRECT: whole 4 KiB blocks, then `tail`
    std::vector<uint8_t> tail;       ///< the writer's: bytes after the last whole block
    uint64_t onDisk = 0;             ///< the writer's: bytes written (whole blocks when direct)
    std::atomic<uint64_t> packets{0}, bytes{0}, noBuffer{0}, overBound{0}, writeFailed{0};
  };
  /// A free chunk with room for `bytes` for stream s (false, counted, when none).
  bool takeChunk(StreamState& s, int stream, size_t bytes);
  void handOver(StreamState& s);
  void writeChunks();  ///< the writer thread
  /// Writes a chunk (behind the stream's tail); false (the file as before) on an error.
  bool writeChunk(StreamState& s, Chunk& c, int& error);
  /// Cuts off what a failed write left behind the stream's last whole chunk: the recording
  /// stays whole records (with direct I/O the tail still waits, so that the record it holds
  /// the end of is completed, in its block reserved again).
  void cutBack(StreamState& s);
  /// Reserves the direct-I/O block at `offset` beyond the file's end (fallocate, keeping
  /// its size), so that the bytes of a tail written there at the end find room on a disk
  /// that filled meanwhile; false (errno in `error`) when there is none.
  static bool reserveBlock(int fd, uint64_t offset, int& error);
  /// Writes `bytes` at the stream's end; false on an error (errno in `error`).
  static bool writeAll(int fd, const uint8_t* data, size_t bytes, int& error);

  RecorderOptions options_;
  std::vector<std::unique_ptr<StreamState>> streams_;
  AlignedBuffer<uint8_t, kDirectIoAlignment> arena_;  ///< every chunk's bytes
  Pool<Chunk> pool_{"recorder"};
  std::atomic<uint64_t> granted_{0};  ///< bytes of chunks granted under maxBytes
  std::atomic<bool> boundReached_{false};
  /// The writer's: a tail and a chunk, when the tail is not the chunk's lead (after a
  /// failed write)
  AlignedBuffer<uint8_t, kDirectIoAlignment> staging_;
  RateLimiter failureLog_{10.0};
  bool finished_ = false;
  std::thread writer_;
};

}  // namespace rtcp::ion
