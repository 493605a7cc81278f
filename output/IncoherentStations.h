#pragma once
/// \file IncoherentStations.h
/// Broken stations that only the cross-correlations show: a station whose receivers send
/// noise without the sky (a wrong beam, a dead LBA field with its amplifiers on, a clock
/// gone) has an autocorrelation of the right level and shape, so neither the
/// pre-correlation flagger's power test nor AOFlagger (which sees one baseline at a time)
/// can tell it; but its cross-correlations with every other station are consistent with
/// zero while the other baselines see the sky. BG/P's
/// OLAP.CNProc.onlinePostCorrelationFlaggingDetectBrokenStations is the switch
/// (FlaggingSettings.h); PostCorrelationFlagger runs this on each window of integrations
/// before AOFlagger, and flags such a station whole (every baseline with it, its
/// autocorrelation too) in the integrations the window decides.
///
/// The statistic: per baseline (p, q), per cell of the window (integration t, channel c ≥ 1,
/// polarisation XX or YY) with data, the normalised coherence
/// `ρ = (V_pq / n_pq) / sqrt((A_p / n_p) (A_q / n_q))`, A the autocorrelations, n the valid
/// samples (ρ = 0 where an autocorrelation is 0: a station sending zeros). For uncorrelated
/// signals `n_pq |ρ|²` is exponentially distributed with mean 1
/// and variance 1, so `z = Σ (n_pq |ρ|² − 1) / sqrt(M)` over the baseline's M cells is
/// about normal (0, 1): z below kNoCoherence (5) is consistent with no correlation. A
/// source that is 1 % of the noise gives z ≈ n ρ² sqrt(M) = 12207 × 10⁻⁴ × sqrt(480) ≈ 27
/// in 16 one-second integrations of 16 channels.
///
/// The decision, with three stations or more: a station is incoherent when each of its
/// baselines with data has z < kNoCoherence, and some baseline between two other stations
/// that are not has z > kSkyCoherence (20): the sky is there to be seen. Without a sky in
/// the data (a weak source, noise-only simulations) nothing is decided.

#include <cstdint>
#include <span>
#include <vector>

#include "rtcp/CorrelatedBlock.h"

namespace rtcp::ion {

constexpr double kNoCoherence = 5;
constexpr double kSkyCoherence = 20;

/// z of every baseline (p, q), p < q, as [baselineIndex(p, q)] (autocorrelations: 0) over
/// the cells of `window` (one subband's integrations, each nrStations × nrChannels);
/// a baseline without data gets NaN.
std::vector<double> coherenceSignificance(std::span<CorrelatedData* const> window);

/// [station]: true for the stations the decision above finds incoherent.
std::vector<bool> findIncoherentStations(const std::vector<double>& significance, int nrStations);

}  // namespace rtcp::ion
