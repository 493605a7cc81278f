#include "InputConverter.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "rtcp/RspPacket.h"

namespace rtcp::correlator {

static_assert(std::endian::native == std::endian::little, "RSP samples are little-endian");

namespace {

float nibbleValue(int nibble) { return float((nibble ^ 8) - 8); }

/// out[i] = in[i], i < count: little-endian 16-bit integers to floats (vectorised).
__attribute__((target_clones("avx512f", "avx2", "default"))) void convert16(
    const uint8_t* __restrict in, int count, float* __restrict out) {
  for (int i = 0; i < count; ++i) {
    int16_t v;
    std::memcpy(&v, in + 2 * i, 2);
    out[i] = float(v);
  }
}

/// out[i] = in[i], i < count: 8-bit integers to floats (vectorised).
__attribute__((target_clones("avx512f", "avx2", "default"))) void convert8(
    const int8_t* __restrict in, int count, float* __restrict out) {
  for (int i = 0; i < count; ++i) out[i] = float(in[i]);
}

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
    convert16(in, values, o);
  } else if (bits_ == 8) {
    convert8(reinterpret_cast<const int8_t*>(in), values, o);
  } else {
    for (int i = 0; i < 2 * count; ++i) out[i] = nibbles_[in[i]];
  }
}

int InputConverter::convert(const StationBlock& block, int subband,
                            std::complex<float>* samples) const {
  return convert(block, subband, 0, block.header.nrSamples, samples);
}

int InputConverter::convert(const StationBlock& block, int subband, int first, int count,
                            std::complex<float>* samples) const {
  if (block.header.bitsPerSample != bits_)
    throw std::invalid_argument("InputConverter: station " + std::to_string(block.header.station) +
                                " block has " + std::to_string(block.header.bitsPerSample) +
                                "-bit samples, expected " + std::to_string(bits_));
  if (first < 0 || count < 0 || first + count > block.header.nrSamples)
    throw std::invalid_argument("InputConverter: samples [" + std::to_string(first) + ", " +
                                std::to_string(first + count) + ") of a block of " +
                                std::to_string(block.header.nrSamples));
  const uint8_t* in = block.sample(subband, 0);
  const uint64_t* valid = &block.valid[size_t(subband) * block.wordsPerSubband()];
  int flagged = 0;
  const int end = first + count;
  // runs that stay inside one 64-sample word of valid bits
  for (int start = first; start < end; start = (start / 64 + 1) * 64) {
    const int offset = start % 64;
    const int run = std::min(64 - offset, end - start);
    const uint64_t word = valid[start / 64] >> offset;
    const uint64_t all = run == 64 ? ~uint64_t(0) : (uint64_t(1) << run) - 1;
    std::complex<float>* out = samples + 2 * size_t(start - first);
    if ((word & all) == all) {
      convertRun(in + size_t(start) * bytesPerSample_, run, out);
      continue;
    }
    for (int t = 0; t < run; ++t) {
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
