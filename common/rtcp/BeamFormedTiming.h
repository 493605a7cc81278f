#pragma once
/// \file BeamFormedTiming.h
/// When a beam-formed sample was observed. Two of the beam former's steps delay what they
/// pass on (correlator/beamformed/README.md): coherent dedispersion by its overlap-save
/// latency, and the final filter bank (C > 1 channels) by the middle of its 16-tap window.
/// Computed here from the settings alone, so that the compute ranks (which make the data)
/// and storage-sink (which writes the files' times) agree without a field on the wire.
///
/// Output sample i of block b of a TAB holds the stream (at the reference position, as
/// delay compensation aligns it) around subband sample
///   blockStartSample(b) + i × inputSamplesPerSample() − beamFormedDelay(settings, tab),
/// that is, the output sample's window [that, that + inputSamplesPerSample()).

#include <cstdint>

#include "rtcp/ObservationSettings.h"

namespace rtcp {

/// k of the cold-plasma delay k DM / f^2, in s Hz^2 per (pc / cm^3) (4.148808e3 s MHz^2).
constexpr double kDispersionConstant = 4.148808e3 * 1e12;

/// Taps per channel of the beam former's final filter bank (the correlator's).
constexpr int kFinalFilterBankTaps = 16;

/// The coherent dedispersion's latency (subband samples) for one dispersion measure in one
/// subband: half the smearing inside the widest-smeared final channel (its lowest, with the
/// filter bank's half-channel shift), plus a margin of 128 samples for the filter's tails,
/// rounded up to a multiple of `multiple` (an output sample's subband samples).
int dedispersionLatencyFor(double dispersionMeasure, double subbandWidth, double subbandFrequency,
                           int nrChannels, int multiple);

/// The final filter bank's group delay (subband samples) for C channels: its window spans
/// kFinalFilterBankTaps × C samples ending with the output sample's own C, so its middle
/// lies (kFinalFilterBankTaps − 1) C / 2 samples before the output sample's. 0 for C = 1
/// (no filter bank).
int finalFilterBankDelay(int nrChannels);

/// The observation's dedispersion latency (subband samples): the largest over its coherently
/// dedispersed TABs and their SAPs' subbands, a multiple of the coherent output sample
/// (channels × time integration), the same for every dedispersed TAB; 0 when none is (or
/// with fly's eye).
int dedispersionLatency(const ObservationSettings& settings);

/// How late a TAB's output is (subband samples): the dedispersion latency when the TAB is
/// dedispersed, plus its Stokes' final filter bank delay.
int64_t beamFormedDelay(const ObservationSettings& settings, const TabSettings& tab);

/// The blocks a beam former must run through before block b, starting there afresh, so that
/// its state at b is bit for bit the one of a beam former that ran from further back (a
/// dump's lead-in, BeamFormedSettings::leadInBlocks). The state is copies of what it was
/// given, never sums: the final filter banks' histories hold the last (taps − 1) × C samples
/// of each beam's series, whole blocks for ⌈(taps − 1) C / N⌉ blocks of N samples (the
/// larger C of the coherent and incoherent outputs; none for C = 1); where the TABs are
/// dedispersed those samples come from overlap-save segments, laid from each block's
/// start, whose input reaches 2 × latency samples before the block that holds them: the
/// dedispersion's overlap (a copy of its input), ⌈2 latency / N⌉ blocks more, which also
/// cover its valid fractions' delay line (latency). 0 without beam-formed output.
int64_t beamFormerLeadInBlocks(const ObservationSettings& settings);

}  // namespace rtcp
