#pragma once
/// \file SubbandProcessor.h
/// The compute ranks' signal chain for one subband of one block: input conversion,
/// polyphase filter bank, flags, delay and bandpass correction, RFI flagging (with
/// settings.flagging: PreCorrelationFlagger.h), superstation, correlation and valid-sample
/// counts. Every buffer is allocated once, at construction; process() can
/// be called for any subband and block of the observation.
///
/// Typical use by the MPI program (one processor per rank, reused for every subband):
///   SubbandProcessor processor(settings);
///   CorrelatedData output = processor.makeOutput();
///   processor.process(blocks, localSubband, subbandIndex, output);  // per subband, block

#include <complex>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "Beamformer.h"
#include "CorrelatorKernel.h"
#include "DelayAndBandpassCorrection.h"
#include "InputConverter.h"
#include "PolarisationCorrection.h"
#include "PolyphaseFilterBank.h"
#include "PreCorrelationFlagger.h"
#include "SpectrumFlagger.h"
#include "SpectrumMask.h"
#include "SubbandBlockFlagger.h"
#include "ValidSampleCounter.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/Integrations.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/StationBlock.h"
#include "rtcp/StepTimes.h"

namespace rtcp::correlator {

class SubbandProcessor {
 public:
  /// Spectra a station's steps 1-4 take at a time (see spectraPerChunk below).
  static constexpr int kSpectraPerChunk = 256;

  /// Sizes from settings: stations, channelsPerSubband, spectraPerBlock, bitsPerSample,
  /// delayCompensation, correctBandPass, tiedArrayStationNames, clock. nrThreads 0:
  /// OpenMP's default (stations are filtered in parallel, the kernel is threaded).
  /// spectraPerChunk: steps 1-4 of a station run chunk by chunk of this many spectra
  /// (input conversion of the chunk's samples and filter history, filter bank, delay and
  /// bandpass), so the intermediate data stay in cache instead of passing through memory
  /// three times; a multiple of 16 (the FFT batches and delay tiles: the visibilities are
  /// bit-identical for any chunk size), or 0 for the whole block at once (the plain twin).
  explicit SubbandProcessor(const ObservationSettings& settings, int nrThreads = 0,
                            CorrelatorKernel::Isa isa = CorrelatorKernel::Isa::kAuto,
                            int spectraPerChunk = kSpectraPerChunk);
  ~SubbandProcessor();

  /// Processes one subband of one block. stations[s]: the StationBlock of station s (the
  /// observation's station list order) holding the subband at index localSubband;
  /// subbandIndex: the subband's index in settings.subbands. All blocks must be of the same
  /// block number. Overwrites output (nrOutputStations() x C): visibilities summed over the
  /// block, valid-sample counts, subband number, and integration = block number /
  /// blocksPerIntegration. Throws std::invalid_argument naming the station and field of a
  /// block that does not fit.
  void process(std::span<const StationBlock* const> stations, int localSubband, int subbandIndex,
               CorrelatedData& output);

  /// A CorrelatedData of the output's shape.
  CorrelatedData makeOutput() const;
  /// Stations after superstation merging (see Beamformer.h for the order).
  int nrOutputStations() const { return beamformer_.nrOutputStations(); }
  std::vector<std::string> outputStationNames() const;
  const CorrelatorKernel& kernel() const { return kernel_; }

  /// The steps of the chain, in execution order (StepTimes indices).
  enum Step : size_t {
    kInputConversion,
    kSpectrumFlags,
    kFilterBank,
    kDelayAndBandpass,
    kRfiFlags,
    kBeamformer,
    kCorrelator,
    kValidSamples,
  };
  /// Time per step since construction: steps 1-4 and RFI flagging per station (summed over
  /// its chunks and over the threads that filter stations in parallel; the broken stations'
  /// zeroing once per subband), steps 5-7 per subband.
  const StepTimes& stepTimes() const { return times_; }

  /// Whether the pre-correlation flagger runs (settings.flagging.anyPreCorrelation()).
  bool flagsInterference() const { return rfiFlagger_ != nullptr; }
  /// Per input station: what the pre-correlation flagger flagged since construction.
  const std::vector<StationFlagTotals>& flagTotals() const {
    return rfiFlagger_ ? rfiFlagger_->totals() : noTotals_;
  }
  /// The flags of the last process(), per input station (after superstation merging, the
  /// first member's hold the superstation's); empty without the flagger.
  const std::vector<ChannelFlags>& channelFlags() const {
    return rfiFlagger_ ? rfiFlagger_->flags() : noFlags_;
  }

 private:
  struct Scratch;
  void check(std::span<const StationBlock* const> stations, int localSubband,
             int subbandIndex) const;
  /// Time spent in steps 1, 3 and 4 over a station's chunks.
  struct ChunkTimes {
    StepTimes::Clock::duration conversion{}, filtering{}, correction{};
  };
  void processStation(const StationBlock& block, int localSubband, double subbandFrequency,
                      int station, Scratch& scratch);
  /// Steps 1, 3 and 4 of spectra [first, first + count) of a station; cellPowers: the RFI
  /// flagger's, summed by step 4 when asked.
  void processChunk(const StationBlock& block, int localSubband, int first, int count, int station,
                    CellPowerGrid cellPowers, Scratch& scratch, ChunkTimes& times);

  ObservationSettings settings_;  ///< a copy: the caller's may go
  Integrations integrations_;
  int nrStations_;
  int nrChannels_;
  int nrSpectra_;
  int nrThreads_;
  int spectraPerChunk_;  ///< spectra per chunk of steps 1-4, at most nrSpectra_
  InputConverter converter_;
  SpectrumFlagger flagger_;
  PolyphaseFilterBank filterBank_;
  DelayAndBandpassCorrection correction_;
  std::vector<PolarisationCorrection> polarisations_;  ///< per input station
  Beamformer beamformer_;
  CorrelatorKernel kernel_;
  ValidSampleCounter validSampleCounter_;
  std::vector<std::unique_ptr<Scratch>> scratch_;  ///< one per thread (one chunk's data)
  AlignedBuffer<float> samples_;     ///< [input station][channel][pol][reim][padded time]
  std::vector<SpectrumMask> masks_;  ///< per input station
  std::unique_ptr<SubbandBlockFlagger> rfiFlagger_;  ///< with settings.flagging
  const std::vector<StationFlagTotals> noTotals_;
  const std::vector<ChannelFlags> noFlags_;
  StepTimes times_;
};

}  // namespace rtcp::correlator
