#pragma once
/// \file SubbandLevelFlagger.h
/// The view across subbands: a subband that interference fills whole (an FM transmitter:
/// IE613's subband 40 at 107.8 MHz, every channel about 1000 times its neighbours') looks
/// flat to a flagger that judges each channel within its own subband (the pre-correlation
/// flagger in the ranks, AOFlagger after correlation). Here each subband's power at one
/// station and block is compared with its neighbours' across the band.
///
/// Where it runs, by the data flow: ionproc's input (StationInput, before a block is
/// served). The compute ranks hold only some subbands each; ionproc's output path holds
/// every subband of its ranks' integrations, autocorrelations included, but only for the
/// MSs, after the beam former's data have left. ionproc's input holds every subband of its
/// stations, and a subband it flags is served as lost data is (valid bits clear, samples
/// zero), so it enters neither the correlation nor the beam former, and WEIGHT_SPECTRUM
/// and the beam-formed valid fractions drop by exactly what it flagged. Its cost is one
/// read of part of the station's block (rowPower over every levelWordStride-th run of 64
/// samples of each subband, once per station and block): 0.037 CPU s per GB of the block,
/// 0.10–0.12 of what ionproc's input costs for it now (`rtcp-bench ingest`,
/// `ingest.subband_levels_*`; docs/PERFORMANCE.md §3).
///
/// The test, per station and block (judgeSubbandLevels): L_i = 10 log10 of subband i's mean
/// power per valid sample; the bandpass B_i the running median of L over ±halfWindow
/// subbands in frequency order (the ends extended by odd reflection, 2 L_0 − L_j, so a
/// monotonic slope keeps its median at the subband itself); r_i = L_i − B_i; σ = 1.4826 ×
/// the median absolute deviation of r over all subbands (robust: a few bright ones do not
/// move it). Subband i is flagged when r_i > max(minimumDb, sigmas × σ). Why these:
/// - a running median follows any monotonic slope exactly, however steep (a bandpass edge,
///   the HBA filter's 0.2 dB per subband above 110 MHz) and a smooth hump within its
///   curvature over ±8 subbands; a celestial source is broadband, so it raises all
///   subbands alike (or along a power law) and leaves r near 0;
/// - the floor, 15 dB: a subband filled by a transmitter stands 30 dB and more above its
///   neighbours (IE613's 29, 39, 40: 31–33 dB), while a narrow carrier that leaves most of
///   its subband's channels clean raises the subband's power less (IE613's 18, 20, 28, 35,
///   37, 38: 4–9 dB) and is the per-channel flagger's, which keeps the clean channels;
/// - sigmas × σ: the bandpass's own scatter (σ 0.1 dB in IE613: 6σ = 0.6 dB, under the
///   floor) — it raises the threshold only for a station whose levels scatter by 2.5 dB or
///   more, where 15 dB would no longer be a clear excess;
/// - an end subband of the observed band is judged against its reflection and so never
///   flagged (one side cannot tell an edge from interference); fewer than
///   kMinSubbandsToJudge subbands with data: nothing is judged.

#include <cstdint>
#include <span>
#include <vector>

#include "rtcp/FlaggingSettings.h"

namespace rtcp::ion {

/// Fewer subbands with data than this in a station's block: no view across subbands.
constexpr int kMinSubbandsToJudge = 5;

/// A subband's level is taken from every stride-th run of 64 samples of the block
/// (levelWordStride), at most 1 in kMaxLevelStride, keeping at least kMinLevelWords runs
/// (4096 samples: the level to 0.1 dB, against a threshold of 15): a pass over every
/// sample cost 2 times the serve's copy, 0.3 of ionproc's input (docs/PERFORMANCE.md §3).
constexpr int64_t kMaxLevelStride = 16;
constexpr int64_t kMinLevelWords = 64;
/// The stride for a block of `count` samples: count / 64 / kMinLevelWords within
/// [1, kMaxLevelStride].
int64_t levelWordStride(int64_t count);

/// One subband's power over a block: the sum of |X|^2 + |Y|^2 over its valid samples, and
/// their number.
struct RowPower {
  double sum = 0;
  int64_t samples = 0;
};

/// Power of `count` dual-polarisation samples of one row (RSP payload encoding,
/// bytesPerDualPolSample(bitsPerSample) bytes each), only where `valid` has the bit (bit t %
/// 64 of word t / 64), and only in every wordStride-th word (runs of 64 samples from 0).
/// Whole words of valid samples are summed without looking at the bits (integers, exact).
RowPower rowPower(const uint8_t* row, const uint64_t* valid, int64_t count, int bitsPerSample,
                  int64_t wordStride = 1);
/// The plain twin: sample by sample through decodeRspSample.
RowPower rowPowerReference(const uint8_t* row, const uint64_t* valid, int64_t count,
                           int bitsPerSample, int64_t wordStride = 1);

/// What judgeSubbandLevels found, per subband in the order given.
struct SubbandLevelVerdict {
  std::vector<uint8_t> flagged;    ///< 1: flagged whole
  std::vector<double> residualDb;  ///< L_i − B_i (0 for a subband without data)
  double sigmaDb = 0;              ///< σ of the residuals
  double thresholdDb = 0;          ///< max(minimumDb, sigmas × σ); 0: nothing judged
};

/// Judges one station's block. frequencies[i] (Hz) and powers[i] (mean power per valid
/// sample; <= 0 or not finite: no data, never flagged) per subband, in any order.
SubbandLevelVerdict judgeSubbandLevels(std::span<const double> frequencies,
                                       std::span<const double> powers,
                                       const SubbandLevelFlagging& settings);

}  // namespace rtcp::ion
