#pragma once
/// \file StationInput.h
/// The station input (ionproc's, and a rank's in local mode): receivers for every input stream of
/// its stations, a CircularSampleBuffer per station, the delay thread, and the block server that
/// hands the compute ranks rtcp::StationBlocks read at the coarsely delayed position.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "BlockSource.h"
#include "CircularSampleBuffer.h"
#include "DelayCompensation.h"
#include "InputRecorder.h"
#include "InputStatistics.h"
#include "PacketReceiver.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/SharedMemory.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {

struct StationInputOptions {
  /// Real time: seconds past a block's end before it is served; default: the parset's
  /// OLAP.maxNetworkDelay.
  std::optional<double> maxLatency;
  double stallTimeout = 10;  ///< non-real time: a udp stream silent this long has "passed"
  int releaseLag = 1;        ///< serving block b releases blocks before b - releaseLag (< 0: never)
  int delayLookahead = 4;    ///< blocks of delays computed ahead of the newest request
  /// Real-time replays of recordings start playing at the first block asked for, not at
  /// start(): the compute ranks' start-up (MPI, FFTW plans, buffers) does not eat into
  /// the buffer, as it does not in a live observation that starts after set-up.
  bool replayFromFirstRequest = false;
  DelayFunction delays;         ///< injected delays; empty: DelayModel of the settings
  double maxDelaySeconds = -1;  ///< bound on |tau_s| for sizing the buffer; < 0: from positions
  std::optional<double> clockShift;  ///< wall minus recording time; default: see clockShift()
  /// The stations' sample rings in one shared-memory segment, lent in place (lendInto):
  /// ionproc's, whose ranks on this host read the rows where the receivers wrote them.
  bool sharedRing = false;
  /// Record every stream's valid packets (InputRecorder: recordingFileName(field, k) in
  /// the directory, written behind the input); none when absent.
  std::optional<RecorderOptions> record;
};

class StationInput : public BlockSource {
 public:
  /// Opens the inputs of the given stations (indices in the station list; empty: all).
  /// The settings are copied.
  /// Throws StreamError (e.g. a busy port or a missing recording) or std::invalid_argument.
  StationInput(const ObservationSettings& settings, std::vector<int> stations = {},
               StationInputOptions options = {});
  ~StationInput() override;

  /// Starts the receivers and the clock of real-time replays (with
  /// replayFromFirstRequest: a real-time replay at the first serveInto).
  void start();
  /// The receivers run (and a real-time replay's clock with them).
  bool started() const { return started_; }
  /// Stops the receivers; waiting serveInto() calls throw.
  void stop();

  std::vector<int> stations() const override;
  void serveInto(StationBlock& out, int64_t block, int station, int firstSubband,
                 int nrSubbands) override;
  const SharedMemoryName* sampleRing() const override;
  void lendInto(StationBlock& out, int64_t block, int station, int firstSubband, int nrSubbands,
                uint64_t lease) override;
  void endLease(uint64_t lease) override;
  /// Blocks before `block` will not be asked for again: their samples may be overwritten.
  void release(int64_t block);

  std::vector<StationStatistics> statistics() const;
  /// Every recording of StationInputOptions::record (none without), station by station.
  std::vector<RecordingCounts> recordings() const;
  /// Seconds from recording time to wall-clock time: 0 for live (udp) input; for real-time
  /// replays of recordings, so that the later of the observation start and the first
  /// recorded packet plays when start() is called.
  double clockShift() const { return clockShift_; }  ///< 0 until started()
  /// The bound UDP port of a station's stream (0 for files).
  uint16_t udpPort(int station, int stream) const;
  const CircularSampleBuffer& buffer(int station) const;
  const ObservationSettings& settings() const { return settings_; }
  /// The bound on |coarse delay| in samples, which a block read reaches beyond its samples.
  int64_t maxDelaySamples() const { return maxDelaySamples_; }
  /// Waits until every served station's samples before `end` may be served, as a block
  /// ending there would (real time: its latency past the end; else until every stream
  /// passed it); false once stopped.
  bool waitUntilServable(int64_t end);

 private:
  struct Station;
  /// A lent read's pin on a stream of a station's buffer.
  struct Pin {
    Station* station;
    int stream;
    int64_t firstSample;
  };
  Station& station(int index) const;
  /// For a shared ring: grows `capacity` to whole blocks plus the ranks' blocks in flight
  /// and places the slots so that every block read lies in one piece of a row
  /// (RingPlacement); false (and a warning) when this block size cannot be placed so.
  bool planSharedRing(int64_t& capacity, RingPlacement& placement) const;
  /// serveInto, or with `pins` lendInto (the pins it takes appended).
  void fill(StationBlock& out, int64_t block, int station, int firstSubband, int nrSubbands,
            std::vector<Pin>* pins);
  /// Seconds past a block's end before it is served in real time.
  double maxLatency() const { return options_.maxLatency.value_or(settings_.maxNetworkDelay); }
  double deriveClockShift() const;
  bool isReplay() const;  ///< every input a recording
  void startReceivers();
  /// Faults in every station's buffer (on populateThread_, from construction on).
  void populateBuffers();
  /// Waits until populateBuffers() is done; false once stopped.
  bool waitUntilPopulated();
  /// Waits until block samples up to `end` may be served; false once stopped.
  bool waitForData(Station& s, int firstStream, int lastStream, int64_t end);
  /// The view across subbands (SubbandLevelFlagger.h): which of the observation's subbands
  /// the station's block `block` has far above its bandpass across subbands ([subband]
  /// 1: flagged whole). Judged once per station and block, by the first call, over every
  /// subband's samples of the block (in place in the ring), and kept for the other calls.
  std::vector<uint8_t> subbandLevelFlags(Station& s, int64_t block, const BlockDelays& delays);
  /// Flags the rows of `out` whose subbands subbandLevelFlags flags; the valid samples
  /// that removed.
  int64_t flagBrightSubbands(Station& s, StationBlock& out, const BlockDelays& delays);
  /// Zeroes rows [firstRow, +nrRows) of a block (a lent block's: points them at the
  /// station's first ring row) and clears their valid bits.
  void flagRows(const Station& s, StationBlock& out, int firstRow, int nrRows) const;

  const ObservationSettings settings_;  ///< a copy: the delay thread reads it
  StationInputOptions options_;
  int64_t maxDelaySamples_ = 0;
  std::atomic<double> clockShift_{0};
  std::once_flag startOnce_;
  std::atomic<bool> started_{false};
  SharedMemory ring_;  ///< every station's buffer, when options_.sharedRing
  std::vector<std::unique_ptr<Station>> stations_;  ///< after ring_: their buffers borrow it
  std::unique_ptr<InputRecorder> recorder_;         ///< options_.record's; stream by stream
  std::mutex leaseMutex_;
  std::map<uint64_t, std::vector<Pin>> leases_;  ///< lendInto's pins by lease
  std::vector<int> stationSlot_;  ///< observation station index -> stations_ index, or -1
  DelayCompensation delays_;
  std::atomic<int64_t> released_{INT64_MIN};  ///< blocks before it are released
  std::atomic<bool> stopped_{false};
  std::mutex stopMutex_;
  std::condition_variable stopCv_;  ///< also: populated_
  bool populated_ = false;          ///< guarded by stopMutex_
  std::thread populateThread_;      ///< last: it uses the members above
};

}  // namespace rtcp::ion
