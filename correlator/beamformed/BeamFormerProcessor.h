#pragma once
/// \file BeamFormerProcessor.h
/// The compute ranks' beam-former chain for one subband of one block (COBALT's
/// BeamFormerPreprocessingStep, BeamFormerCoherentStep and BeamFormerIncoherentStep):
///
///  1. per station: input conversion, flags per delay-compensation spectrum, a plain
///     C_d-channel FFT (DelayChannelSplitter), delay and bandpass correction toward the
///     SAP centre and the polarisation corrections (the correlator's own steps);
///  2. superstations merged (the correlator's Beamformer);
///  3. coherent TABs: phase weights of each TAB's direction (TabWeights, delays at the
///     block's middle) and the weighted sum over stations (TabKernel); fly's eye: each
///     station its own beam;
///  4. per TAB (or, incoherent, per station): back to the subband's time resolution
///     (ChannelMerger), coherent dedispersion at the TAB's DM (CoherentDedispersion, state
///     carried from block to block of a subband), the final channels (the correlator's
///     PolyphaseFilterBank, its history carried likewise; none for one channel), Stokes
///     and time integration (StokesIntegrator; incoherent: the stations' Stokes summed).
///
/// Lost samples are zeroed with the spectrum of C_d samples they belong to; with
/// pre-correlation flagging (settings.flagging) each station's delay-compensation channels
/// are flagged by the same flagger the correlator runs (SubbandBlockFlagger), and a flagged
/// sample is zeroed and counted out like a lost one: it enters no TAB, no incoherent sum
/// and no fly's-eye beam, and each output value carries the fraction of (station, input
/// sample) contributions that were valid (BeamFormedData::validFraction, ValidFractions.h). Every
/// buffer is allocated at construction; the per-subband state (dedispersion and filter histories)
/// when a subband is first seen. One processor per rank, not re-entrant (one process() at a time).
///
/// The state is copies of the samples given, never running sums, and the sums of a block are
/// taken in a fixed order: the same blocks give the same outputs to the bit, and a processor
/// that starts at block b − beamFormerLeadInBlocks() (rtcp/BeamFormedTiming.h) gives from
/// block b on the outputs of one that started further back (a dump's replay and its lead-in).

#include <complex>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "Beamformer.h"
#include "ChannelMerger.h"
#include "CoherentDedispersion.h"
#include "DelayAndBandpassCorrection.h"
#include "DelayChannelSplitter.h"
#include "InputConverter.h"
#include "PolarisationCorrection.h"
#include "PolyphaseFilterBank.h"
#include "SpectrumMask.h"
#include "StokesIntegrator.h"
#include "SubbandBlockFlagger.h"
#include "TabKernel.h"
#include "ValidFractions.h"
#include "rtcp/BeamFormedBlock.h"
#include "rtcp/BeamFormedSettings.h"
#include "rtcp/DelayModel.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/StationBlock.h"
#include "rtcp/StepTimes.h"

namespace rtcp::correlator::beamformed {

/// What one kind of beam-formed output holds (Cobalt.BeamFormer.{Coherent,Incoherent}Stokes).
struct StokesParameters {
  StokesKind kind = StokesKind::kI;  ///< .which
  int nrChannels = 1;                ///< .nrChannelsPerSubband
  int timeIntegration = 1;           ///< .timeIntegrationFactor
};

/// One tied-array beam of a SAP (Observation.Beam[b].TiedArrayBeam[t]).
struct TabParameters {
  Direction direction;           ///< absolute direction (angle1, angle2, directionType)
  bool coherent = true;          ///< false: the SAP's incoherent Stokes
  double dispersionMeasure = 0;  ///< pc / cm^3; coherent dedispersion when > 0 (and enabled)
  int station = -1;  ///< fly's eye: the station (index in the station list) of this beam
};

/// The beam former's parameters; BeamFormedSettings (the parset) maps onto them (from()).
struct BeamFormerParameters {
  /// ObservationSettings::beamFormed's: C_d (64 when not derived), each SAP's TABs in
  /// its order (fly's eye: one per antenna field), Stokes, dedispersion.
  static BeamFormerParameters from(const BeamFormedSettings& settings);

  int nrDelayChannels = 64;                      ///< Cobalt.BeamFormer.nrDelayCompensationChannels
  std::vector<std::vector<TabParameters>> tabs;  ///< [sap][tab], in output order
  bool flysEye = false;  ///< each (output) station its own coherent beam, replacing tabs
  bool coherentDedispersion = true;  ///< Cobalt.BeamFormer.coherentDedisperseChannels
  StokesParameters coherent, incoherent;
};

class BeamFormerProcessor {
 public:
  using Isa = TabKernel::Isa;

  /// Sizes from settings (stations, subbands, beams, spectraPerBlock x channelsPerSubband
  /// samples per block, bits, delay and bandpass correction, superstations, clock).
  /// Throws std::invalid_argument when the block's samples do not divide into C_d, C_f x
  /// timeIntegration, or the parameters name a SAP the observation lacks.
  BeamFormerProcessor(const ObservationSettings& settings, BeamFormerParameters parameters,
                      int nrThreads = 0, Isa isa = Isa::kAuto);
  ~BeamFormerProcessor();

  /// Outputs of one subband: one per TAB of its SAP, in TAB order, shaped and labelled
  /// (sap, tab, subband).
  std::vector<BeamFormedData> makeOutputs(int subbandIndex) const;
  /// TABs of a SAP.
  int nrTabs(int sap) const;
  /// Makes subband subbandIndex's state (histories, dedispersion chirps and plans) now,
  /// not at its first block: a rank prepares its subbands before it asks for blocks, so
  /// that the first blocks are not late.
  void prepare(int subbandIndex);

  /// Processes one subband of one block (arguments as SubbandProcessor::process) into
  /// outputs (from makeOutputs(subbandIndex)): samples, valid fractions, block.
  void process(std::span<const StationBlock* const> stations, int localSubband, int subbandIndex,
               std::vector<BeamFormedData>& outputs);

  /// The dedispersed TABs' output is late by this many subband-rate samples (see
  /// CoherentDedispersion.h): the same for every TAB and subband, a whole number of
  /// output samples. 0 when nothing is dedispersed.
  int dedispersionLatency() const { return latency_; }
  /// How late TAB `tab` of SAP `sap` is (subband samples): output sample i of block b holds
  /// the stream from blockStartSample(b) + i × (channels × time integration) − delayOf()
  /// on. The dedispersion latency when it is dedispersed, plus its final filter bank's
  /// group delay (rtcp/BeamFormedTiming.h: beamFormedDelay() of the settings it came from,
  /// which storage-sink writes into the files' times).
  int delayOf(int sap, int tab) const;
  int nrOutputStations() const { return superstation_.nrOutputStations(); }
  /// Whether the pre-correlation flagger runs on the stations (settings.flagging).
  bool flagsInterference() const { return rfiFlagger_ != nullptr; }
  /// Per input station: what the flagger flagged on the delay-compensation grid since
  /// construction (empty without it).
  const std::vector<StationFlagTotals>& flagTotals() const;

  enum Step : size_t {
    kInputConversion,
    kFlags,
    kDelayChannels,
    kDelayAndBandpass,
    kRfiFlags,
    kSuperstation,
    kTabWeights,
    kTabKernel,
    kBackToTime,
    kDedispersion,
    kFinalChannels,
    kStokes,
  };
  const StepTimes& stepTimes() const { return times_; }

 private:
  struct Scratch;
  struct SubbandState;
  void preprocessStation(const StationBlock& block, int localSubband, double frequency, int station,
                         Scratch& scratch);
  SubbandState& stateOf(int subbandIndex, int64_t block);
  SubbandState* makeState(int subbandIndex);  ///< made at the first call
  void formCoherent(int sap, double frequency, int64_t block, SubbandState& state,
                    std::vector<BeamFormedData>& outputs);
  void formIncoherent(int sap, SubbandState& state, std::vector<BeamFormedData>& outputs);
  /// Final channels of one beam's time series: history first, then the block.
  void channelise(const PolyphaseFilterBank& filterBank,
                  AlignedBuffer<std::complex<float>>& history, Scratch& scratch);
  /// After the histories started afresh: the subband-rate samples whose final filter bank
  /// window reaches into the zeros before them (the first taps - 1 spectra) are not valid.
  void flagFilterPrologue(const PolyphaseFilterBank& filterBank, float* valid) const;
  /// The input station behind fly's-eye TAB `tab` of a SAP.
  int flysEyeStation(int sap, int tab) const;
  /// The samples of input station s that enter the sums (after the superstation merge).
  const ChannelFlags& validOf(int station) const {
    return rfiFlagger_ ? rfiFlagger_->flags()[size_t(station)] : arrived_[size_t(station)];
  }
  /// cells_, coherentValid_ and incoherentValid_ of this block, from the output stations.
  void computeValidFractions();
  /// Floats of one station's or beam's [channel][pol][reim][paddedSpectra].
  size_t floatsPerBeam() const {
    return size_t(parameters_.nrDelayChannels) * 4 * size_t(paddedSpectra_);
  }
  const float* stationBuffer(int station) const {
    return stationSamples_.data() + size_t(station) * floatsPerBeam();
  }
  void check(std::span<const StationBlock* const> stations, int localSubband, int subbandIndex,
             const std::vector<BeamFormedData>& outputs) const;

  ObservationSettings settings_;
  BeamFormerParameters parameters_;
  int nrStations_;
  int nrSamples_;  ///< subband-rate samples per block
  int nrSpectra_;  ///< delay-compensation spectra per block
  int paddedSpectra_;
  int historySamples_;  ///< the correlator's filter history at the front of a StationBlock
  int nrThreads_;
  int latency_ = 0;
  int fftSize_ = 0;
  InputConverter converter_;
  DelayChannelSplitter splitter_;
  DelayAndBandpassCorrection correction_;
  std::vector<PolarisationCorrection> polarisations_;
  Beamformer superstation_;
  std::vector<int> outputStations_;  ///< input station behind each output station
  ChannelMerger merger_;
  PolyphaseFilterBank coherentFilterBank_, incoherentFilterBank_;
  StokesIntegrator coherentStokes_, incoherentStokes_;
  std::unique_ptr<DedispersionFft> dedispersionFft_;
  std::vector<std::unique_ptr<TabKernel>> kernels_;  ///< [sap], null without coherent TABs
  std::vector<std::vector<int>> coherentTabs_;       ///< [sap]: TAB indices of the coherent ones
  DelayModel delayModel_;
  AlignedBuffer<float> stationSamples_;       ///< [station][channel][pol][reim][paddedSpectra]
  AlignedBuffer<float> beams_;                ///< [coherent tab][channel][pol][reim][paddedSpectra]
  std::vector<std::complex<float>> weights_;  ///< [channel][output station][coherent tab]
  std::vector<SpectrumMask> masks_;           ///< per input station: spectra that arrived
  std::unique_ptr<SubbandBlockFlagger> rfiFlagger_;  ///< with settings.flagging
  std::vector<ChannelFlags> arrived_;  ///< per input station, without the flagger: masks_
  ValidFractionMap coherentMap_, incoherentMap_;  ///< delay-channel grid -> final channels
  std::vector<float> cells_;  ///< [spectrum][delay channel]: fraction of output stations valid
  std::vector<float> coherentValid_;    ///< [final spectrum][final channel], coherent C_f
  std::vector<float> incoherentValid_;  ///< [final spectrum][final channel], incoherent C_f
  std::vector<float> mapScratch_;
  std::vector<std::unique_ptr<Scratch>> scratch_;  ///< per thread
  std::map<int, std::unique_ptr<SubbandState>> states_;
  StepTimes times_;
};

}  // namespace rtcp::correlator::beamformed
