#pragma once
/// \file TabWeights.h
/// The phase weights of the coherent TABs (TabKernel's input). A station's samples are
/// delay-compensated toward its SAP's centre; a source in a TAB's direction then still
/// carries exp(+2 pi i f_c dtau) in channel c, dtau = tau_TAB,s - tau_SAP,s its geometric
/// delay toward the TAB minus that toward the SAP centre (DESIGN §2.3). The weight
/// exp(-2 pi i f_c dtau) takes it off, so the TAB adds the source in phase at every station.

#include <complex>
#include <span>

namespace rtcp::correlator::beamformed {

/// weights[channel][station][tab] = exp(-2 pi i f_c delays[tab][station]); delays in
/// seconds, channelFrequencies[channel] in Hz (sky frequencies).
void tabWeights(std::span<const double> delays, int nrTabs, int nrStations,
                std::span<const double> channelFrequencies, std::complex<float>* weights);

}  // namespace rtcp::correlator::beamformed
