#include "SubbandProcessor.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "rtcp/Logger.h"

namespace rtcp::correlator {

namespace {

std::vector<std::string> stationNames(const ObservationSettings& settings) {
  std::vector<std::string> names;
  for (const StationSettings& station : settings.stations) names.push_back(station.name);
  return names;
}

/// Spectra per chunk of steps 1-4 (see the constructor's spectraPerChunk).
int chunkSize(int spectraPerChunk, int nrSpectra) {
  if (spectraPerChunk < 0 || spectraPerChunk % 16 != 0)
    throw std::invalid_argument("SubbandProcessor: " + std::to_string(spectraPerChunk) +
                                " spectra per chunk (need 0 or a multiple of 16)");
  return spectraPerChunk == 0 ? nrSpectra : std::min(spectraPerChunk, nrSpectra);
}

std::vector<const SpectrumMask*> constMasks(const std::vector<SpectrumMask*>& masks) {
  return {masks.begin(), masks.end()};
}

}  // namespace

/// Per-thread buffers of one station's way through steps 1-4, one chunk of spectra.
struct SubbandProcessor::Scratch {
  Scratch(size_t samples, size_t spectra) : input(2 * samples), spectra(2 * spectra) {}
  AlignedBuffer<std::complex<float>> input;    ///< [time][pol], history included
  AlignedBuffer<std::complex<float>> spectra;  ///< [spectrum][channel][pol]
  DelayAndBandpassCorrection::Phasors phasors;
  std::vector<std::complex<float>> rotations;  ///< polarisation corrections [channel][pol]
  PreCorrelationFlagger::Workspace rfi;        ///< the RFI flagger's grid
};

SubbandProcessor::SubbandProcessor(const ObservationSettings& settings, int nrThreads,
                                   CorrelatorKernel::Isa isa, int spectraPerChunk)
    : settings_(settings),
      integrations_(settings.blocksPerIntegration),
      nrStations_(settings.nrStations()),
      nrChannels_(settings.channelsPerSubband),
      nrSpectra_(settings.spectraPerBlock),
      nrThreads_(nrThreads > 0 ? nrThreads : omp_get_max_threads()),
      spectraPerChunk_(chunkSize(spectraPerChunk, nrSpectra_)),
      converter_(settings.bitsPerSample),
      flagger_(nrChannels_, nrSpectra_),
      filterBank_(nrChannels_, nrSpectra_),
      correction_(nrChannels_, nrSpectra_, CorrelatorKernel::paddedLength(nrSpectra_),
                  settings.subbandWidth(), settings.delayCompensation, settings.correctBandPass),
      beamformer_(stationNames(settings), settings.tiedArrayStationNames),
      kernel_(beamformer_.nrOutputStations(), nrChannels_, nrSpectra_, isa, nrThreads_),
      validSampleCounter_(beamformer_.nrOutputStations(), nrChannels_),
      times_({"input conversion", "spectrum flags", "filter bank", "delay/bandpass", "rfi flags",
              "beamformer", "correlator", "valid samples"}) {
  if (nrStations_ < 1) throw std::invalid_argument("SubbandProcessor: no stations");
  if (settings.flagging.anyPreCorrelation())
    rfiFlagger_ = std::make_unique<SubbandBlockFlagger>(settings.flagging, nrStations_, nrChannels_,
                                                        nrSpectra_,
                                                        CorrelatorKernel::paddedLength(nrSpectra_));
  for (int t = 0; t < nrThreads_; ++t)
    scratch_.push_back(std::make_unique<Scratch>(
        size_t(filterBank_.nrHistorySamples()) + size_t(spectraPerChunk_) * nrChannels_,
        size_t(spectraPerChunk_) * nrChannels_));
  if (rfiFlagger_)
    for (auto& scratch : scratch_) scratch->rfi = rfiFlagger_->makeWorkspace();
  samples_ = AlignedBuffer<float>(size_t(nrStations_) * kernel_.floatsPerStation());
  for (int s = 0; s < nrStations_; ++s) {
    std::array<double, 2> delay{}, phase{};
    if (settings.delayCompensation)  // COBALT applies them with the delays
      for (int pol = 0; pol < 2; ++pol) {
        delay[size_t(pol)] = settings.polarisationDelay(s, pol);
        phase[size_t(pol)] = settings.polarisationPhase(s, pol);
      }
    polarisations_.emplace_back(nrChannels_, CorrelatorKernel::paddedLength(nrSpectra_),
                                settings.subbandWidth(), delay, phase);
  }
  for (int s = 0; s < nrStations_; ++s) masks_.emplace_back(nrSpectra_);
  RTCP_LOG_DEBUG("correlator", "subband processor: " << nrStations_ << " stations -> "
                                                     << nrOutputStations() << ", " << nrChannels_
                                                     << " channels, " << nrSpectra_
                                                     << " spectra, kernel "
                                                     << CorrelatorKernel::toString(kernel_.isa())
                                                     << ", " << nrThreads_ << " threads");
}

SubbandProcessor::~SubbandProcessor() = default;

CorrelatedData SubbandProcessor::makeOutput() const {
  return CorrelatedData(nrOutputStations(), nrChannels_);
}

std::vector<std::string> SubbandProcessor::outputStationNames() const {
  return beamformer_.outputNames(stationNames(settings_));
}

void SubbandProcessor::check(std::span<const StationBlock* const> stations, int localSubband,
                             int subbandIndex) const {
  auto fail = [](int s, const std::string& problem) {
    throw std::invalid_argument("SubbandProcessor: station " + std::to_string(s) + ": " + problem);
  };
  if (int(stations.size()) != nrStations_)
    throw std::invalid_argument("SubbandProcessor: " + std::to_string(stations.size()) +
                                " station blocks for " + std::to_string(nrStations_) + " stations");
  if (subbandIndex < 0 || subbandIndex >= settings_.nrSubbands())
    throw std::invalid_argument("SubbandProcessor: subband index " + std::to_string(subbandIndex) +
                                " outside the observation's " +
                                std::to_string(settings_.nrSubbands()) + " subbands");
  for (int s = 0; s < nrStations_; ++s) {
    const StationBlock* block = stations[size_t(s)];
    if (!block) fail(s, "no block");
    const StationBlockHeader& h = block->header;
    if (h.nrSamples != flagger_.nrInputSamples())
      fail(s, "nrSamples " + std::to_string(h.nrSamples) + ", expected " +
                  std::to_string(flagger_.nrInputSamples()));
    if (h.bitsPerSample != converter_.bitsPerSample())
      fail(s, "bitsPerSample " + std::to_string(h.bitsPerSample) + ", expected " +
                  std::to_string(converter_.bitsPerSample()));
    if (localSubband < 0 || localSubband >= h.nrSubbands)
      fail(s, "subband " + std::to_string(localSubband) + " of a block of " +
                  std::to_string(h.nrSubbands) + " subbands");
    if (h.block != stations[0]->header.block)
      fail(s, "block " + std::to_string(h.block) + ", station 0 has block " +
                  std::to_string(stations[0]->header.block));
  }
}

void SubbandProcessor::processStation(const StationBlock& block, int localSubband,
                                      double subbandFrequency, int station, Scratch& scratch) {
  auto t = StepTimes::Clock::now();
  SpectrumMask& mask = masks_[size_t(station)];
  flagger_.flag(block, localSubband, mask);
  t = times_.lap(kSpectrumFlags, t);

  const SubbandDelay& delay = block.delays[size_t(localSubband)];
  const PolarisationCorrection& polarisation = polarisations_[size_t(station)];
  correction_.start(subbandFrequency, delay.residualStart, delay.residualEnd, scratch.phasors);
  if (polarisation.active()) polarisation.rotations(subbandFrequency, scratch.rotations);
  ChunkTimes times;
  times.correction = StepTimes::Clock::now() - t;
  // The flagger's cell powers summed by the delay correction while it writes the samples
  // (not when the polarisation correction rotates them afterwards).
  CellPowerGrid cellPowers;
  if (rfiFlagger_ && rfiFlagger_->takesCellPowers() && !polarisation.active())
    cellPowers = {scratch.rfi.power.data(), scratch.rfi.power.size() / size_t(nrChannels_)};
  for (int first = 0; first < nrSpectra_; first += spectraPerChunk_)
    processChunk(block, localSubband, first, std::min(spectraPerChunk_, nrSpectra_ - first),
                 station, cellPowers, scratch, times);
  times_.add(kInputConversion, times.conversion);
  times_.add(kFilterBank, times.filtering);
  times_.add(kDelayAndBandpass, times.correction);
  if (!rfiFlagger_) return;
  t = StepTimes::Clock::now();
  float* samples = samples_.data() + size_t(station) * kernel_.floatsPerStation();
  if (cellPowers.cells)
    rfiFlagger_->flagStationCells(station, samples, mask, scratch.rfi);
  else
    rfiFlagger_->flagStation(station, samples, mask, scratch.rfi);
  times_.lap(kRfiFlags, t);
}

void SubbandProcessor::processChunk(const StationBlock& block, int localSubband, int first,
                                    int count, int station, CellPowerGrid cellPowers,
                                    Scratch& scratch, ChunkTimes& times) {
  auto t = StepTimes::Clock::now();
  converter_.convert(block, localSubband, first * nrChannels_,
                     filterBank_.nrHistorySamples() + count * nrChannels_, scratch.input.data());
  auto now = StepTimes::Clock::now();
  times.conversion += now - t;
  t = now;
  filterBank_.filter(scratch.input.data(), count, scratch.spectra.data());
  now = StepTimes::Clock::now();
  times.filtering += now - t;
  t = now;
  float* out = samples_.data() + size_t(station) * kernel_.floatsPerStation();
  correction_.apply(scratch.spectra.data(), masks_[size_t(station)], first, count, scratch.phasors,
                    out, cellPowers);
  polarisations_[size_t(station)].apply(scratch.rotations, out, first, count);
  times.correction += StepTimes::Clock::now() - t;
}

void SubbandProcessor::process(std::span<const StationBlock* const> stations, int localSubband,
                               int subbandIndex, CorrelatedData& output) {
  check(stations, localSubband, subbandIndex);
  if (output.nrStations != nrOutputStations() || output.nrChannels != nrChannels_)
    throw std::invalid_argument("SubbandProcessor: output of " + std::to_string(output.nrStations) +
                                " stations x " + std::to_string(output.nrChannels) +
                                " channels, expected " + std::to_string(nrOutputStations()) +
                                " x " + std::to_string(nrChannels_));
  const double frequency = settings_.subbands[size_t(subbandIndex)].frequency;
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic) num_threads(nrThreads_)
  for (int s = 0; s < nrStations_; ++s) {
    try {
      processStation(*stations[size_t(s)], localSubband, frequency, s,
                     *scratch_[size_t(omp_get_thread_num())]);
    } catch (...) {
#pragma omp critical(rtcp_subband_processor_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);

  std::vector<float*> buffers(static_cast<size_t>(nrStations_));
  std::vector<SpectrumMask*> masks(static_cast<size_t>(nrStations_));
  for (int s = 0; s < nrStations_; ++s) {
    buffers[size_t(s)] = samples_.data() + size_t(s) * kernel_.floatsPerStation();
    masks[size_t(s)] = &masks_[size_t(s)];
  }
  auto t = StepTimes::Clock::now();
  if (rfiFlagger_) {
    rfiFlagger_->settle(buffers, constMasks(masks));
    t = times_.lap(kRfiFlags, t);
  }
  beamformer_.merge(buffers, masks, nrChannels_, kernel_.paddedSamples());
  if (rfiFlagger_) rfiFlagger_->mergeSuperstation(beamformer_, buffers, constMasks(masks));
  t = times_.lap(kBeamformer, t);

  std::vector<const float*> inputs;
  std::vector<const SpectrumMask*> outputMasks;
  std::vector<const ChannelFlags*> outputFlags;
  for (int s : beamformer_.outputStations()) {
    inputs.push_back(buffers[size_t(s)]);
    outputMasks.push_back(masks[size_t(s)]);
    if (rfiFlagger_) outputFlags.push_back(&rfiFlagger_->flags()[size_t(s)]);
  }
  kernel_.correlate(inputs, output.visibilities.data());
  t = times_.lap(kCorrelator, t);
  if (rfiFlagger_)
    validSampleCounter_.count(outputFlags, output);
  else
    validSampleCounter_.count(outputMasks, output);
  times_.lap(kValidSamples, t);
  output.subband = subbandIndex;  // the index: two beams may observe one subband number
  output.integration = integrations_.of(stations[0]->header.block);
}

}  // namespace rtcp::correlator
