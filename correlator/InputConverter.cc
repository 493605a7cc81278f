#include "InputConverter.h"

#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "rtcp/RspPacket.h"

namespace rtcp::correlator {

static_assert(std::endian::native == std::endian::little, "RSP samples are little-endian");

namespace {

float nibbleValue(int nibble) { return float((nibble ^ 8) - 8); }

}  // namespace

InputConverter::InputConverter(int bitsPerSample) : bits_(bitsPerSample) {
  if (bits_ != 16 && bits_ != 8 && bits_ != 4)
    throw std::invalid_argument("InputConverter: " + std::to_string(bits_) +
                                " bits per sample (expected 16, 8 or 4)");
  bytesPerSample_ = bytesPerDualPolSample(bits_);
  for (int b = 0; b < 256; ++b) nibbles_[size_t(b)] = {nibbleValue(b & 0xf), nibbleValue(b >> 4)};
}

void InputConverter::convertRun(const uint8_t* in, int count, std::complex<float>* out) const {
  float* o = reinterpret_cast<float*>(out);
  const int values = 4 * count;  // X re, X im, Y re, Y im per sample
  if (bits_ == 16) {
    for (int i = 0; i < values; ++i) {
      int16_t v;
      std::memcpy(&v, in + 2 * i, 2);
      o[i] = float(v);
    }
  } else if (bits_ == 8) {
    const int8_t* v = reinterpret_cast<const int8_t*>(in);
    for (int i = 0; i < values; ++i) o[i] = float(v[i]);
  } else {
    for (int i = 0; i < 2 * count; ++i) out[i] = nibbles_[in[i]];
  }
}

int InputConverter::convert(const StationBlock& block, int subband,
                            std::complex<float>* samples) const {
  if (block.header.bitsPerSample != bits_)
    throw std::invalid_argument("InputConverter: station " + std::to_string(block.header.station) +
                                " block has " + std::to_string(block.header.bitsPerSample) +
                                "-bit samples, expected " + std::to_string(bits_));
  const int nrSamples = block.header.nrSamples;
  const uint8_t* in = block.sample(subband, 0);
  const uint64_t* valid = &block.valid[size_t(subband) * block.wordsPerSubband()];
  int flagged = 0;
  for (int start = 0; start < nrSamples; start += 64) {
    const int count = std::min(64, nrSamples - start);
    const uint64_t word = valid[start / 64];
    const uint64_t all = count == 64 ? ~uint64_t(0) : (uint64_t(1) << count) - 1;
    std::complex<float>* out = samples + 2 * size_t(start);
    if ((word & all) == all) {
      convertRun(in + size_t(start) * bytesPerSample_, count, out);
      continue;
    }
    for (int t = 0; t < count; ++t) {
      if ((word >> t) & 1) {
        convertRun(in + size_t(start + t) * bytesPerSample_, 1, out + 2 * t);
      } else {
        out[2 * t] = out[2 * t + 1] = 0;
        ++flagged;
      }
    }
  }
  return flagged;
}

}  // namespace rtcp::correlator
