#include "BeamFormerProcessor.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <exception>
#include <limits>
#include <stdexcept>

#include "ParallelFor.h"
#include "TabWeights.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/Logger.h"

namespace rtcp::correlator::beamformed {

namespace {

std::vector<std::string> stationNames(const ObservationSettings& settings) {
  std::vector<std::string> names;
  for (const StationSettings& station : settings.stations) names.push_back(station.name);
  return names;
}

void fail(const std::string& problem) {
  throw std::invalid_argument("BeamFormerProcessor: " + problem);
}

/// Samples per block: checked to divide into what the steps need.
int blockSamples(const ObservationSettings& settings, const BeamFormerParameters& parameters) {
  const int64_t samples = settings.samplesPerBlock();
  auto check = [&](int64_t divisor, const std::string& what) {
    if (divisor < 1 || samples % divisor != 0)
      fail("a block of " + std::to_string(samples) + " samples does not divide into " + what +
           " (" + std::to_string(divisor) + ")");
  };
  check(parameters.nrDelayChannels, "delay-compensation channels");
  check(int64_t(parameters.coherent.nrChannels) * parameters.coherent.timeIntegration,
        "coherent channels x time integration");
  check(int64_t(parameters.incoherent.nrChannels) * parameters.incoherent.timeIntegration,
        "incoherent channels x time integration");
  if (int(parameters.tabs.size()) > int(settings.beams.size()))
    fail(std::to_string(parameters.tabs.size()) + " SAPs of TABs for an observation of " +
         std::to_string(settings.beams.size()) + " beams");
  return int(samples);
}

}  // namespace

BeamFormerParameters BeamFormerParameters::from(const BeamFormedSettings& settings) {
  BeamFormerParameters parameters;
  if (settings.nrDelayCompensationChannels > 0)
    parameters.nrDelayChannels = settings.nrDelayCompensationChannels;
  parameters.flysEye = settings.flysEye;
  parameters.coherentDedispersion = settings.coherentDedispersion;
  auto stokes = [](const rtcp::StokesSettings& in) {
    return StokesParameters{in.kind, in.nrChannels, in.timeIntegrationFactor};
  };
  parameters.coherent = stokes(settings.coherent);
  parameters.incoherent = stokes(settings.incoherent);
  for (const SapTabSettings& sap : settings.saps) {
    std::vector<TabParameters> tabs;
    for (const rtcp::TabSettings& tab : sap.tabs)
      tabs.push_back({tab.direction, tab.coherent, tab.dispersionMeasure, tab.station});
    parameters.tabs.push_back(std::move(tabs));
  }
  return parameters;
}

/// Per-thread buffers of one beam's (or station's) way through the chain.
struct BeamFormerProcessor::Scratch {
  Scratch(size_t samples, size_t history, size_t fftSize)
      : input(2 * samples),
        spectra(2 * samples),
        series(2 * (history + samples)),
        channels(2 * samples),
        fft(2 * std::max<size_t>(fftSize, 1)),
        valid(samples),
        cells(samples) {}
  AlignedBuffer<std::complex<float>> input;     ///< [time][pol] converted samples
  AlignedBuffer<std::complex<float>> spectra;   ///< [spectrum][channel][pol] delay channels
  AlignedBuffer<std::complex<float>> series;    ///< [time][pol]: filter history, then the block
  AlignedBuffer<std::complex<float>> channels;  ///< [spectrum][channel][pol] final channels
  AlignedBuffer<std::complex<float>> fft;       ///< dedispersion segment
  std::vector<float> valid;  ///< [final spectrum][final channel]: valid fractions of one beam
  std::vector<float> cells;  ///< [spectrum][delay channel]: a fly's-eye station's valid cells
  std::vector<float> mapScratch;
  BeamFormedData incoherent;                    ///< this thread's share of the incoherent sum
  PreCorrelationFlagger::Workspace rfi;         ///< the RFI flagger's grid
  DelayAndBandpassCorrection::Phasors phasors;  ///< the delay correction's, this block
};

/// What a subband carries from block to block: its TABs' dedispersion and filter
/// histories, its stations' filter histories (incoherent Stokes).
struct BeamFormerProcessor::SubbandState {
  /// The block processed last; none yet: a block the next one never follows (blocks before
  /// 0 are a lead-in's, CorrelatorPipeline).
  int64_t lastBlock = std::numeric_limits<int64_t>::min();
  /// The histories start afresh in this block (the subband's first, or after a gap): the
  /// final filter bank's first taps - 1 spectra reach into zeros.
  bool fresh = true;
  std::vector<std::unique_ptr<CoherentDedispersion>> dedispersion;  ///< [coherent tab], or null
  std::vector<AlignedBuffer<std::complex<float>>> tabHistory;       ///< [coherent tab]
  std::vector<AlignedBuffer<std::complex<float>>> stationHistory;   ///< [output station]
  void reset() {
    fresh = true;
    for (auto& d : dedispersion)
      if (d) d->reset();
    for (auto& h : tabHistory) std::fill(h.begin(), h.end(), std::complex<float>());
    for (auto& h : stationHistory) std::fill(h.begin(), h.end(), std::complex<float>());
  }
};

BeamFormerProcessor::BeamFormerProcessor(const ObservationSettings& settings,
                                         BeamFormerParameters parameters, int nrThreads, Isa isa)
    : settings_(settings),
      parameters_(std::move(parameters)),
      nrStations_(settings.nrStations()),
      nrSamples_(blockSamples(settings, parameters_)),
      nrSpectra_(nrSamples_ / parameters_.nrDelayChannels),
      paddedSpectra_(CorrelatorKernel::paddedLength(nrSpectra_)),
      historySamples_(nrHistorySamples(settings)),
      nrThreads_(nrThreads > 0 ? nrThreads : omp_get_max_threads()),
      converter_(settings.bitsPerSample),
      splitter_(parameters_.nrDelayChannels, nrSpectra_),
      correction_(parameters_.nrDelayChannels, nrSpectra_, paddedSpectra_, settings.subbandWidth(),
                  settings.delayCompensation, settings.correctBandPass),
      superstation_(stationNames(settings), settings.tiedArrayStationNames),
      outputStations_(superstation_.outputStations()),
      merger_(parameters_.nrDelayChannels, nrSpectra_),
      coherentFilterBank_(parameters_.coherent.nrChannels,
                          nrSamples_ / parameters_.coherent.nrChannels),
      incoherentFilterBank_(parameters_.incoherent.nrChannels,
                            nrSamples_ / parameters_.incoherent.nrChannels),
      coherentStokes_(parameters_.coherent.kind, parameters_.coherent.nrChannels,
                      nrSamples_ / parameters_.coherent.nrChannels,
                      parameters_.coherent.timeIntegration),
      incoherentStokes_(parameters_.incoherent.kind, parameters_.incoherent.nrChannels,
                        nrSamples_ / parameters_.incoherent.nrChannels,
                        parameters_.incoherent.timeIntegration),
      delayModel_(settings),
      coherentMap_(parameters_.nrDelayChannels, parameters_.coherent.nrChannels, nrSamples_),
      incoherentMap_(parameters_.nrDelayChannels, parameters_.incoherent.nrChannels, nrSamples_),
      times_({"input conversion", "flags", "delay channels", "delay/bandpass", "rfi flags",
              "superstation", "tab weights", "tab kernel", "back to time", "dedispersion",
              "final channels", "stokes"}) {
  if (nrStations_ < 1) fail("no stations");
  // The group delay the files' times assume (finalFilterBankDelay) is this filter bank's.
  for (const PolyphaseFilterBank* bank : {&coherentFilterBank_, &incoherentFilterBank_})
    if (bank->nrChannels() > 1 &&
        bank->nrHistorySamples() != (kFinalFilterBankTaps - 1) * bank->nrChannels())
      fail("the final filter bank's window is not the " + std::to_string(kFinalFilterBankTaps) +
           " taps rtcp/BeamFormedTiming.h assumes");
  if (parameters_.incoherent.kind == StokesKind::kXXYY)
    fail("incoherent XXYY (complex voltages) does not exist: choose I or IQUV");
  parameters_.tabs.resize(settings.beams.size());
  for (int s = 0; s < nrStations_; ++s) {
    std::array<double, 2> delay{}, phase{};
    if (settings.delayCompensation)
      for (int pol = 0; pol < 2; ++pol) {
        delay[size_t(pol)] = settings.polarisationDelay(s, pol);
        phase[size_t(pol)] = settings.polarisationPhase(s, pol);
      }
    polarisations_.emplace_back(parameters_.nrDelayChannels, paddedSpectra_,
                                settings.subbandWidth(), delay, phase);
    masks_.emplace_back(nrSpectra_);
  }
  if (settings.flagging.anyPreCorrelation())
    rfiFlagger_ = std::make_unique<SubbandBlockFlagger>(
        settings.flagging, nrStations_, parameters_.nrDelayChannels, nrSpectra_, paddedSpectra_,
        SubbandBlockFlagger::EdgeChannel::kFollowsSpectra);
  else
    for (int s = 0; s < nrStations_; ++s)
      arrived_.emplace_back(parameters_.nrDelayChannels, nrSpectra_);

  // Coherent TABs per SAP, their kernels, and one dedispersion latency for them all.
  const int nrOutput = superstation_.nrOutputStations();
  const int outputSample = parameters_.coherent.nrChannels * parameters_.coherent.timeIntegration;
  size_t mostTabs = 0;
  for (size_t sap = 0; sap < parameters_.tabs.size(); ++sap) {
    std::vector<int> coherent;
    for (size_t t = 0; t < parameters_.tabs[sap].size(); ++t) {
      const TabParameters& tab = parameters_.tabs[sap][t];
      if (!tab.coherent) continue;
      coherent.push_back(int(t));
      if (!parameters_.coherentDedispersion || tab.dispersionMeasure <= 0) continue;
      for (int sb : settings.subbandsOfBeam(int(sap)))
        latency_ = std::max(latency_,
                            dedispersionLatencyFor(tab.dispersionMeasure, settings.subbandWidth(),
                                                   settings.subbands[size_t(sb)].frequency,
                                                   parameters_.coherent.nrChannels, outputSample));
    }
    if (parameters_.flysEye) coherent.clear();
    kernels_.push_back(coherent.empty()
                           ? nullptr
                           : std::make_unique<TabKernel>(nrOutput, int(coherent.size()),
                                                         parameters_.nrDelayChannels,
                                                         paddedSpectra_, isa, nrThreads_));
    mostTabs = std::max(mostTabs, coherent.size());
    coherentTabs_.push_back(std::move(coherent));
  }
  if (parameters_.flysEye) latency_ = 0;
  if (latency_ > 0) {
    fftSize_ = CoherentDedispersion::fftSizeFor(latency_);
    dedispersionFft_ = std::make_unique<DedispersionFft>(fftSize_);
  }

  stationSamples_ = AlignedBuffer<float>(size_t(nrStations_) * floatsPerBeam());
  beams_ = AlignedBuffer<float>(mostTabs * floatsPerBeam());
  weights_.resize(size_t(parameters_.nrDelayChannels) * size_t(nrOutput) * mostTabs);
  cells_.resize(size_t(nrSamples_));
  coherentValid_.resize(size_t(nrSamples_));
  incoherentValid_.resize(size_t(nrSamples_));
  const size_t history = size_t(
      std::max(coherentFilterBank_.nrHistorySamples(), incoherentFilterBank_.nrHistorySamples()));
  for (int t = 0; t < nrThreads_; ++t) {
    scratch_.push_back(std::make_unique<Scratch>(size_t(nrSamples_), history, size_t(fftSize_)));
    scratch_.back()->incoherent = incoherentStokes_.makeOutput();
    if (rfiFlagger_) scratch_.back()->rfi = rfiFlagger_->makeWorkspace();
  }
  RTCP_LOG_DEBUG("correlator", "beam former: " << nrStations_ << " stations -> " << nrOutput << ", "
                                               << parameters_.nrDelayChannels << " delay channels, "
                                               << nrSamples_
                                               << " samples a block, dedispersion latency "
                                               << latency_ << " samples");
}

BeamFormerProcessor::~BeamFormerProcessor() = default;

const std::vector<StationFlagTotals>& BeamFormerProcessor::flagTotals() const {
  static const std::vector<StationFlagTotals> none;
  return rfiFlagger_ ? rfiFlagger_->totals() : none;
}

int BeamFormerProcessor::nrTabs(int sap) const {
  if (sap < 0 || sap >= int(parameters_.tabs.size())) return 0;
  const int listed = int(parameters_.tabs[size_t(sap)].size());
  return parameters_.flysEye && listed == 0 ? nrOutputStations() : listed;
}

int BeamFormerProcessor::flysEyeStation(int sap, int tab) const {
  const std::vector<TabParameters>& tabs = parameters_.tabs[size_t(sap)];
  if (size_t(tab) < tabs.size() && tabs[size_t(tab)].station >= 0) {
    const int station = tabs[size_t(tab)].station;
    if (station >= nrStations_)
      fail("fly's eye TAB " + std::to_string(tab) + " of SAP " + std::to_string(sap) +
           ": station " + std::to_string(station) + " of " + std::to_string(nrStations_));
    return station;
  }
  return outputStations_[size_t(tab)];
}

std::vector<BeamFormedData> BeamFormerProcessor::makeOutputs(int subbandIndex) const {
  if (subbandIndex < 0 || subbandIndex >= settings_.nrSubbands())
    fail("subband index " + std::to_string(subbandIndex) + " outside the observation's " +
         std::to_string(settings_.nrSubbands()) + " subbands");
  const int sap = settings_.subbands[size_t(subbandIndex)].beam;
  std::vector<BeamFormedData> outputs;
  for (int t = 0; t < nrTabs(sap); ++t) {
    const bool coherent = parameters_.flysEye || parameters_.tabs[size_t(sap)][size_t(t)].coherent;

    outputs.push_back(coherent ? coherentStokes_.makeOutput() : incoherentStokes_.makeOutput());
    outputs.back().sap = sap;
    outputs.back().tab = t;
    outputs.back().subband = subbandIndex;
  }
  return outputs;
}

int BeamFormerProcessor::delayOf(int sap, int tab) const {
  if (parameters_.flysEye) return finalFilterBankDelay(parameters_.coherent.nrChannels);
  const TabParameters& parameters = parameters_.tabs.at(size_t(sap)).at(size_t(tab));
  if (!parameters.coherent) return finalFilterBankDelay(parameters_.incoherent.nrChannels);
  const bool dedispersed = parameters_.coherentDedispersion && parameters.dispersionMeasure > 0;
  return (dedispersed ? latency_ : 0) + finalFilterBankDelay(parameters_.coherent.nrChannels);
}

void BeamFormerProcessor::preprocessStation(const StationBlock& block, int localSubband,
                                            double frequency, int station, Scratch& scratch) {
  auto t = StepTimes::Clock::now();
  SpectrumMask& mask = masks_[size_t(station)];
  splitter_.flag(block, localSubband, historySamples_, mask);
  t = times_.lap(kFlags, t);
  converter_.convert(block, localSubband, historySamples_, nrSamples_, scratch.input.data());
  t = times_.lap(kInputConversion, t);
  splitter_.split(scratch.input.data(), scratch.spectra.data());
  t = times_.lap(kDelayChannels, t);
  const SubbandDelay& delay = block.delays[size_t(localSubband)];
  float* out = stationSamples_.data() + size_t(station) * floatsPerBeam();
  const PolarisationCorrection& polarisation = polarisations_[size_t(station)];
  // The flagger's cell powers summed by the delay correction while it writes the samples,
  // as in the correlator's chain (not when the polarisation correction rotates them after).
  CellPowerGrid cellPowers;
  if (rfiFlagger_ && rfiFlagger_->takesCellPowers() && !polarisation.active())
    cellPowers = {scratch.rfi.power.data(),
                  scratch.rfi.power.size() / size_t(parameters_.nrDelayChannels)};
  correction_.start(frequency, delay.residualStart, delay.residualEnd, scratch.phasors);
  correction_.apply(scratch.spectra.data(), mask, 0, nrSpectra_, scratch.phasors, out, cellPowers);
  if (polarisation.active()) polarisation.apply(frequency, out);
  t = times_.lap(kDelayAndBandpass, t);
  if (!rfiFlagger_) return;
  if (cellPowers.cells)
    rfiFlagger_->flagStationCells(station, out, mask, scratch.rfi);
  else
    rfiFlagger_->flagStation(station, out, mask, scratch.rfi);
  times_.lap(kRfiFlags, t);
}

void BeamFormerProcessor::check(std::span<const StationBlock* const> stations, int localSubband,
                                int subbandIndex,
                                const std::vector<BeamFormedData>& outputs) const {
  if (int(stations.size()) != nrStations_)
    fail(std::to_string(stations.size()) + " station blocks for " + std::to_string(nrStations_) +
         " stations");
  if (subbandIndex < 0 || subbandIndex >= settings_.nrSubbands())
    fail("subband index " + std::to_string(subbandIndex) + " outside the observation's " +
         std::to_string(settings_.nrSubbands()) + " subbands");
  const int expected = historySamples_ + nrSamples_;
  for (int s = 0; s < nrStations_; ++s) {
    const StationBlock* block = stations[size_t(s)];
    const std::string station = "station " + std::to_string(s) + ": ";
    if (!block) fail(station + "no block");
    const StationBlockHeader& h = block->header;
    if (h.nrSamples != expected)
      fail(station + "nrSamples " + std::to_string(h.nrSamples) + ", expected " +
           std::to_string(expected));
    if (h.bitsPerSample != converter_.bitsPerSample())
      fail(station + "bitsPerSample " + std::to_string(h.bitsPerSample) + ", expected " +
           std::to_string(converter_.bitsPerSample()));
    if (localSubband < 0 || localSubband >= h.nrSubbands)
      fail(station + "subband " + std::to_string(localSubband) + " of a block of " +
           std::to_string(h.nrSubbands) + " subbands");
    if (h.block != stations[0]->header.block)
      fail(station + "block " + std::to_string(h.block) + ", station 0 has block " +
           std::to_string(stations[0]->header.block));
  }
  const int sap = settings_.subbands[size_t(subbandIndex)].beam;
  if (int(outputs.size()) != nrTabs(sap))
    fail(std::to_string(outputs.size()) + " outputs for the " + std::to_string(nrTabs(sap)) +
         " TABs of SAP " + std::to_string(sap) + " (use makeOutputs)");
}

void BeamFormerProcessor::computeValidFractions() {
  std::vector<const ChannelFlags*> stations;
  for (int station : outputStations_) stations.push_back(&validOf(station));
  stationFractions(stations, nrSpectra_, cells_.data());
  coherentMap_.map(cells_.data(), coherentValid_.data(), mapScratch_);
  incoherentMap_.map(cells_.data(), incoherentValid_.data(), mapScratch_);
}

void BeamFormerProcessor::prepare(int subbandIndex) { makeState(subbandIndex); }

BeamFormerProcessor::SubbandState& BeamFormerProcessor::stateOf(int subbandIndex, int64_t block) {
  SubbandState* state = makeState(subbandIndex);
  // A gap (the subband's previous block went to another rank, or was skipped): the
  // histories no longer belong to this stream.
  if (state->lastBlock != block - 1) state->reset();
  state->lastBlock = block;
  return *state;
}

BeamFormerProcessor::SubbandState* BeamFormerProcessor::makeState(int subbandIndex) {
  auto& state = states_[subbandIndex];
  if (!state) {
    state = std::make_unique<SubbandState>();
    const int sap = settings_.subbands[size_t(subbandIndex)].beam;
    const double frequency = settings_.subbands[size_t(subbandIndex)].frequency;
    const size_t coherentHistory = 2 * size_t(coherentFilterBank_.nrHistorySamples());
    const int coherentBeams =
        parameters_.flysEye ? nrTabs(sap) : int(coherentTabs_[size_t(sap)].size());
    for (int i = 0; i < coherentBeams; ++i) {
      state->tabHistory.emplace_back(coherentHistory);
      const double dm =
          parameters_.flysEye
              ? 0
              : parameters_.tabs[size_t(sap)][size_t(coherentTabs_[size_t(sap)][size_t(i)])]
                    .dispersionMeasure;
      state->dedispersion.push_back(latency_ > 0 && dm > 0
                                        ? std::make_unique<CoherentDedispersion>(
                                              fftSize_, latency_, settings_.subbandWidth(),
                                              frequency, parameters_.coherent.nrChannels, dm)
                                        : nullptr);
    }
    for (int o = 0; o < nrOutputStations(); ++o)
      state->stationHistory.emplace_back(2 * size_t(incoherentFilterBank_.nrHistorySamples()));
  }
  return state.get();
}

void BeamFormerProcessor::channelise(const PolyphaseFilterBank& filterBank,
                                     AlignedBuffer<std::complex<float>>& history,
                                     Scratch& scratch) {
  const size_t h = 2 * size_t(filterBank.nrHistorySamples());
  std::copy(history.begin(), history.end(), scratch.series.begin());
  filterBank.filter(scratch.series.data(), nrSamples_ / filterBank.nrChannels(),
                    scratch.channels.data());
  std::copy(scratch.series.begin() + std::ptrdiff_t(2 * size_t(nrSamples_)),
            scratch.series.begin() + std::ptrdiff_t(2 * size_t(nrSamples_) + h), history.begin());
}

void BeamFormerProcessor::flagFilterPrologue(const PolyphaseFilterBank& filterBank,
                                             float* valid) const {
  std::fill_n(valid, std::min(filterBank.nrHistorySamples(), nrSamples_), 0.0f);
}

void BeamFormerProcessor::formCoherent(int sap, double frequency, int64_t block,
                                       SubbandState& state, std::vector<BeamFormedData>& outputs) {
  const std::vector<int>& tabs = coherentTabs_[size_t(sap)];
  const int nrOutput = nrOutputStations();
  const int nrBeams = parameters_.flysEye ? nrTabs(sap) : int(tabs.size());
  if (nrBeams == 0) return;
  auto t = StepTimes::Clock::now();
  if (!parameters_.flysEye) {
    // Delays toward each TAB minus those toward the SAP centre, at the block's middle.
    const double middle =
        double(settings_.blockStartSample(block) + nrSamples_ / 2) / settings_.subbandWidth();
    const std::vector<double> centre = delayModel_.delays(settings_.beams[size_t(sap)], middle);
    std::vector<double> delays(tabs.size() * size_t(nrOutput));
    for (size_t i = 0; i < tabs.size(); ++i) {
      const std::vector<double> toTab =
          delayModel_.delays(parameters_.tabs[size_t(sap)][size_t(tabs[i])].direction, middle);
      for (int o = 0; o < nrOutput; ++o) {
        const size_t station = size_t(outputStations_[size_t(o)]);
        delays[i * size_t(nrOutput) + size_t(o)] = toTab[station] - centre[station];
      }
    }
    std::vector<double> frequencies(size_t(parameters_.nrDelayChannels));
    for (int c = 0; c < parameters_.nrDelayChannels; ++c)
      frequencies[size_t(c)] = correction_.channelFrequency(frequency, c);
    tabWeights(delays, int(tabs.size()), nrOutput, frequencies, weights_.data());
    t = times_.lap(kTabWeights, t);
    std::vector<const float*> inputs;
    for (int station : outputStations_) inputs.push_back(stationBuffer(station));
    kernels_[size_t(sap)]->form(inputs, weights_.data(), beams_.data());
    times_.lap(kTabKernel, t);
  }

  // The TABs (not fly's eye) see the same stations, so their valid fractions are the same,
  // delayed alike where dedispersed (one latency for every TAB): the first TAB of each kind,
  // dedispersed or not, computes them (delay line, filter prologue, Stokes sums) and the
  // others take its. Per TAB that was 5 passes over a block of floats (28 Nov 2026).
  std::array<int, 2> carrier{-1, -1};  ///< [dedispersed]: the TAB that computes them
  if (!parameters_.flysEye)
    for (int i = nrBeams - 1; i >= 0; --i) carrier[state.dedispersion[size_t(i)] ? 1 : 0] = i;
  parallelFor(nrBeams, nrThreads_, [&](int i, int thread) {
    Scratch& scratch = *scratch_[size_t(thread)];
    const float* beam = parameters_.flysEye ? stationBuffer(flysEyeStation(sap, i))
                                            : beams_.data() + size_t(i) * floatsPerBeam();
    BeamFormedData& output = outputs[size_t(parameters_.flysEye ? i : tabs[size_t(i)])];
    CoherentDedispersion* dedispersion = state.dedispersion[size_t(i)].get();
    const bool carriesValid = parameters_.flysEye || carrier[dedispersion ? 1 : 0] == i;
    float* valid = carriesValid ? scratch.valid.data() : nullptr;
    auto s = StepTimes::Clock::now();
    std::complex<float>* series =
        scratch.series.data() + 2 * size_t(coherentFilterBank_.nrHistorySamples());
    merger_.merge(beam, paddedSpectra_, series);
    if (parameters_.flysEye) {  // one station: each of its cells valid or not
      const ChannelFlags* station = &validOf(flysEyeStation(sap, i));
      stationFractions({&station, 1}, nrSpectra_, scratch.cells.data());
      coherentMap_.map(scratch.cells.data(), scratch.valid.data(), scratch.mapScratch);
    } else if (valid) {
      std::copy(coherentValid_.begin(), coherentValid_.end(), scratch.valid.begin());
    }
    s = times_.lap(kBackToTime, s);
    if (dedispersion) {
      dedispersion->process(*dedispersionFft_, series, valid, nrSamples_, scratch.fft.data());
      s = times_.lap(kDedispersion, s);
    }
    channelise(coherentFilterBank_, state.tabHistory[size_t(i)], scratch);
    if (valid && state.fresh) flagFilterPrologue(coherentFilterBank_, valid);
    s = times_.lap(kFinalChannels, s);
    coherentStokes_.detect(scratch.channels.data(), false, output);
    if (valid) coherentStokes_.validFraction(valid, output);
    times_.lap(kStokes, s);
  });
  if (parameters_.flysEye) return;
  for (int i = 0; i < nrBeams; ++i) {
    const int from = carrier[state.dedispersion[size_t(i)] ? 1 : 0];
    if (from == i) continue;
    const AlignedBuffer<float>& fractions = outputs[size_t(tabs[size_t(from)])].validFraction;
    AlignedBuffer<float>& to = outputs[size_t(tabs[size_t(i)])].validFraction;
    std::copy(fractions.begin(), fractions.end(), to.begin());
  }
}

void BeamFormerProcessor::formIncoherent(int sap, SubbandState& state,
                                         std::vector<BeamFormedData>& outputs) {
  if (parameters_.flysEye) return;
  std::vector<int> incoherent;
  for (size_t t = 0; t < parameters_.tabs[size_t(sap)].size(); ++t)
    if (!parameters_.tabs[size_t(sap)][t].coherent) incoherent.push_back(int(t));
  if (incoherent.empty()) return;
  const int nrOutput = nrOutputStations();
  std::exception_ptr error;
#pragma omp parallel num_threads(nrThreads_)
  {
    Scratch& scratch = *scratch_[size_t(omp_get_thread_num())];
    std::fill(scratch.incoherent.samples.begin(), scratch.incoherent.samples.end(), 0.0f);
    // Static: each thread sums the same stations every block, and the threads' sums are
    // added in thread order, so that the same blocks give the same Stokes to the bit (a
    // dump's replay gives the live samples; dynamic scheduling summed the stations in an
    // order of the moment). The stations' work is alike.
#pragma omp for schedule(static)
    for (int o = 0; o < nrOutput; ++o) {
      try {
        auto s = StepTimes::Clock::now();
        merger_.merge(stationBuffer(outputStations_[size_t(o)]), paddedSpectra_,
                      scratch.series.data() + 2 * size_t(incoherentFilterBank_.nrHistorySamples()));
        s = times_.lap(kBackToTime, s);
        channelise(incoherentFilterBank_, state.stationHistory[size_t(o)], scratch);
        s = times_.lap(kFinalChannels, s);
        incoherentStokes_.detect(scratch.channels.data(), true, scratch.incoherent);
        times_.lap(kStokes, s);
      } catch (...) {
#pragma omp critical(rtcp_beam_former_error)
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
  BeamFormedData& first = outputs[size_t(incoherent[0])];
  std::fill(first.samples.begin(), first.samples.end(), 0.0f);
  for (const auto& scratch : scratch_)
    for (size_t i = 0; i < first.samples.size(); ++i)
      first.samples[i] += scratch->incoherent.samples[i];
  std::vector<float>& valid = scratch_[0]->valid;
  std::copy(incoherentValid_.begin(), incoherentValid_.end(), valid.begin());
  if (state.fresh) flagFilterPrologue(incoherentFilterBank_, valid.data());
  incoherentStokes_.validFraction(valid.data(), first);
  for (size_t k = 1; k < incoherent.size(); ++k) {
    BeamFormedData& other = outputs[size_t(incoherent[k])];
    std::copy(first.samples.begin(), first.samples.end(), other.samples.begin());
    std::copy(first.validFraction.begin(), first.validFraction.end(), other.validFraction.begin());
  }
}

void BeamFormerProcessor::process(std::span<const StationBlock* const> stations, int localSubband,
                                  int subbandIndex, std::vector<BeamFormedData>& outputs) {
  check(stations, localSubband, subbandIndex, outputs);
  const double frequency = settings_.subbands[size_t(subbandIndex)].frequency;
  const int sap = settings_.subbands[size_t(subbandIndex)].beam;
  const int64_t block = stations[0]->header.block;
  parallelFor(nrStations_, nrThreads_, [&](int s, int thread) {
    preprocessStation(*stations[size_t(s)], localSubband, frequency, s, *scratch_[size_t(thread)]);
  });

  auto t = StepTimes::Clock::now();
  std::vector<float*> buffers(static_cast<size_t>(nrStations_));
  std::vector<SpectrumMask*> masks(static_cast<size_t>(nrStations_));
  for (int s = 0; s < nrStations_; ++s) {
    buffers[size_t(s)] = stationSamples_.data() + size_t(s) * floatsPerBeam();
    masks[size_t(s)] = &masks_[size_t(s)];
  }
  const std::vector<const SpectrumMask*> arrived(masks.begin(), masks.end());
  if (rfiFlagger_) {
    rfiFlagger_->settle(buffers, arrived);
    t = times_.lap(kRfiFlags, t);
  }
  superstation_.merge(buffers, masks, parameters_.nrDelayChannels, paddedSpectra_);
  if (rfiFlagger_)
    rfiFlagger_->mergeSuperstation(superstation_, buffers, arrived);
  else
    for (int station = 0; station < nrStations_; ++station)
      arrived_[size_t(station)].setAll(masks_[size_t(station)]);
  computeValidFractions();
  times_.lap(kSuperstation, t);

  SubbandState& state = stateOf(subbandIndex, block);
  formCoherent(sap, frequency, block, state, outputs);
  formIncoherent(sap, state, outputs);
  state.fresh = false;
  for (BeamFormedData& output : outputs) {
    output.sap = sap;
    output.subband = subbandIndex;
    output.block = block;
  }
}

}  // namespace rtcp::correlator::beamformed
