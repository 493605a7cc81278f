#pragma once
/// \file ChainBenchmark.h
/// The whole signal chain's speed (SubbandProcessor, 16-bit input, 64 channels, one
/// thread), for rtcp-bench filterbank and for the capacity benchmark's prediction.

namespace rtcp::correlator::bench {

/// Subbands of nrStations stations one core processes in real time.
double chainSubbandsPerCore(int nrStations);

}  // namespace rtcp::correlator::bench
