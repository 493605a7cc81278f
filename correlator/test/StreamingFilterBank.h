#pragma once
// A PolyphaseFilterBank fed block after block: it keeps the history between calls, so that
// two half blocks give the same spectra as one whole block (what tFilterBankPhysics
// checks of the stateless filter's history handling).
#include <complex>
#include <cstring>

#include "PolyphaseFilterBank.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::correlator::test {

class StreamingFilterBank {
 public:
  StreamingFilterBank(int nrChannels, int maxSpectra)
      : bank_(nrChannels, maxSpectra),
        stream_(2 * (size_t(bank_.nrHistorySamples()) + size_t(maxSpectra) * nrChannels)) {}

  /// input samples[time][pol] holds nrSpectra x C new samples only; the history is what
  /// the previous calls left (zeros at first).
  void filter(const std::complex<float>* input, int nrSpectra, std::complex<float>* spectra) {
    const size_t history = 2 * size_t(bank_.nrHistorySamples());  // complex values
    const size_t fresh = 2 * size_t(nrSpectra) * bank_.nrChannels();
    std::memcpy(static_cast<void*>(stream_.data() + history), input,
                sizeof(std::complex<float>) * fresh);
    bank_.filter(stream_.data(), nrSpectra, spectra);
    std::memmove(static_cast<void*>(stream_.data()), stream_.data() + fresh,
                 sizeof(std::complex<float>) * history);
  }
  /// Sets the history: nrHistorySamples() samples[time][pol].
  void setHistory(const std::complex<float>* history) {
    std::memcpy(static_cast<void*>(stream_.data()), history,
                sizeof(std::complex<float>) * 2 * size_t(bank_.nrHistorySamples()));
  }

 private:
  PolyphaseFilterBank bank_;
  AlignedBuffer<std::complex<float>> stream_;  ///< input[time][pol], history first
};

}  // namespace rtcp::correlator::test
