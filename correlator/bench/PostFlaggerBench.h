#pragma once
// `rtcp-bench flagger`, post-correlation part (PostFlaggerBench.cc): AOFlagger's cost per
// subband-integration of LOFAR's 24 stations, and the flags of each setting of the window
// and the polarisations against injected interference and against the previous default.

namespace rtcp::correlator::bench {

/// Prints the post-correlation flagger's figures (flagger.post.*).
void printPostCorrelationFigures();

}  // namespace rtcp::correlator::bench
