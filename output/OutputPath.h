#pragma once
/// \file OutputPath.h
/// ionproc's output path: the Integrator adds correlated blocks into integrations, which
/// the post-correlation flagger flags (with settings.flagging.postCorrelation:
/// PostCorrelationFlagger.h) and which go to storage-sink through a StorageSender; each
/// TAB's beam-formed data of a subband-block goes, as a DESIGN §2.4b block, through the
/// same StorageSender to the storage-sinks of its files (options: OutputPathOptions). The
/// correlator tests' local mode runs the same path without storage and takes each
/// integration after flagging (OutputPathOptions::afterFlagging).

#include <atomic>
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "Integrator.h"
#include "PostCorrelationFlagger.h"
#include "QuickLook.h"
#include "StorageSender.h"
#include "VisibilitySink.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/StepTimes.h"

namespace rtcp::ion {

struct OutputPathOptions {
  /// Send integrations to the parset's storage locations (when its correlated output is
  /// enabled).
  bool toStorage = true;
  /// Integrations that may wait per storage connection (ionproc --output-queue).
  size_t queuePerConnection = 16;
  /// Bytes per storage connection spooled to disk behind a full queue (--spool-mb), and
  /// the directory of the spool files (--spool-dir): StorageSender.h.
  uint64_t spoolBytes = 0;
  std::string spoolDirectory = "/tmp";
  /// Integrations sent but not yet on storage-sink's disk, kept to send again after a
  /// connection broke: up to retainBytes per connection (--retain-mb).
  uint64_t retainBytes = 0;
  /// Seconds finish() waits for storage-sink to take what is queued (--linger).
  double finishTimeoutSeconds = 10;
  /// The observation's secret, with which each storage connection proves it belongs to
  /// the observation; required when integrations go to storage.
  std::optional<ObservationSecret> secret;
  /// Called with each integration after flagging, before it is queued for storage (the
  /// correlator tests' local mode appends it to a dump file: correlator/program/test/
  /// LocalMode.h); none when empty.
  std::function<void(const CorrelatedData&)> afterFlagging;
};

class OutputPath : public VisibilitySink {
 public:
  OutputPath(const ObservationSettings& settings, OutputPathOptions options);
  ~OutputPath() override;

  /// One block's correlation of subband index `subbandIndex` (Integrator::add).
  void add(int subbandIndex, int64_t block, int nrStations, int nrChannels,
           std::span<const std::complex<float>> visibilities,
           std::span<const uint32_t> validSamples) override;
  /// One TAB's beam-formed data of one subband-block, checked against the parset's shape
  /// for that TAB (std::invalid_argument naming it), queued for the storage-sinks of its
  /// files (StorageSender::writeBeamFormed).
  void addBeamFormed(int subbandIndex, int64_t block, int tab, std::span<const float> samples,
                     std::span<const float> validFraction) override;
  /// After the last block: sends every open integration on and waits up to
  /// finishTimeoutSeconds for storage. False when an integration was not stored.
  bool finish();

  const Integrator& integrator() const { return *integrator_; }
  /// The newest integration of one subband, for the operator's console (QuickLook.h).
  const QuickLook& quickLook() const { return quickLook_; }
  /// The storage sender; nullptr without storage output.
  const StorageSender* storage() const { return storage_.get(); }
  /// Lines for the final log: integration and storage counts, time per step.
  std::vector<std::string> summary() const;
  /// The post-correlation flagger (AOFlagger, broken stations); nullptr when it does not run.
  const PostCorrelationFlagger* postFlagger() const { return postFlagger_.get(); }
  /// Per block: adding it into its integration; per integration: handing it to the
  /// storage sender (in a replay, waiting for room in its queue). Per TAB-subband-block:
  /// serialising it and handing it to the storage sender. Per integration, with online
  /// flagging: post-correlation flagging (per window).
  enum Step : size_t { kIntegrate, kQueueForStorage, kQueueBeamFormed, kFlag };
  const StepTimes& stepTimes() const { return times_; }

 private:
  void emit(std::unique_ptr<CorrelatedData> integration);
  /// To the quick look, afterFlagging and storage.
  void deliver(std::unique_ptr<CorrelatedData> integration);
  /// The post-correlation flagger's final lines: AOFlagger's count in all and per station,
  /// and the stations flagged whole as incoherent (observe's summary takes them).
  std::vector<std::string> postFlaggingReport() const;

  const ObservationSettings& settings_;
  int64_t observationId_;
  OutputPathOptions options_;
  std::unique_ptr<StorageSender> storage_;
  std::unique_ptr<Integrator> integrator_;
  QuickLook quickLook_;
  std::unique_ptr<PostCorrelationFlagger> postFlagger_;
  std::atomic<uint64_t> beamFormedReceived_{0}, beamFormedNotStored_{0};
  StepTimes times_{{"integrate", "queue for storage", "queue beam-formed", "rfi flags"}};
};

}  // namespace rtcp::ion
