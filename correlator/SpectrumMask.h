#pragma once
/// \file SpectrumMask.h
/// Which spectra of a block are valid: one bit per spectrum (set = valid).

#include <algorithm>
#include <bit>
#include <cstdint>

#include "rtcp/AlignedBuffer.h"

namespace rtcp::correlator {

class SpectrumMask {
 public:
  SpectrumMask() = default;
  /// nrSpectra bits, all valid or all flagged.
  explicit SpectrumMask(int nrSpectra, bool valid = true)
      : nrSpectra_(nrSpectra), words_((size_t(nrSpectra) + 63) / 64) {
    setAll(valid);
  }

  int size() const { return nrSpectra_; }
  bool valid(int spectrum) const { return (words_[size_t(spectrum) / 64] >> (spectrum % 64)) & 1; }
  /// Bit k: valid(first + k), k < 16 (spectra past the end read as flagged).
  uint32_t bits16(int first) const {
    const int offset = first % 64;
    uint64_t bits = words_[size_t(first) / 64] >> offset;
    if (offset > 48 && size_t(first) / 64 + 1 < words_.size())
      bits |= words_[size_t(first) / 64 + 1] << (64 - offset);
    return uint32_t(bits & 0xffff);
  }
  void set(int spectrum, bool valid) {
    const uint64_t bit = uint64_t(1) << (spectrum % 64);
    uint64_t& word = words_[size_t(spectrum) / 64];
    word = valid ? (word | bit) : (word & ~bit);
  }
  /// Flags spectra [begin, end) (a word at a time).
  void clear(int begin, int end) {
    while (begin < end) {
      const int offset = begin % 64, bits = std::min(64 - offset, end - begin);
      const uint64_t run = (bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1) << offset;
      words_[size_t(begin) / 64] &= ~run;
      begin += bits;
    }
  }
  void setAll(bool valid) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] = valid ? ~uint64_t(0) : 0;
    clearTail();
  }
  /// Number of valid spectra.
  int count() const {
    int n = 0;
    for (size_t w = 0; w < words_.size(); ++w) n += std::popcount(words_[w]);
    return n;
  }
  /// Whether no spectrum is valid.
  bool none() const {
    uint64_t any = 0;
    for (size_t w = 0; w < words_.size(); ++w) any |= words_[w];
    return any == 0;
  }
  /// Number of spectra valid in both masks (same size).
  int countBoth(const SpectrumMask& other) const {
    int n = 0;
    for (size_t w = 0; w < words_.size(); ++w) n += std::popcount(words_[w] & other.words_[w]);
    return n;
  }
  /// The same spectra valid in both (same size).
  bool equals(const SpectrumMask& other) const {
    for (size_t w = 0; w < words_.size(); ++w)
      if (words_[w] != other.words_[w]) return false;
    return true;
  }
  /// Keeps only the spectra valid in both.
  void intersect(const SpectrumMask& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] &= other.words_[w];
  }
  /// Word w: spectra [64 w, 64 w + 64), bit k = spectrum 64 w + k.
  size_t nrWords() const { return words_.size(); }
  uint64_t word(size_t w) const { return words_[w]; }
  /// Sets word w (bits past the last spectrum must be 0).
  void setWord(size_t w, uint64_t bits) { words_[w] = bits; }
  void copyFrom(const SpectrumMask& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] = other.words_[w];
  }

 private:
  void clearTail() {
    if (nrSpectra_ % 64) words_[words_.size() - 1] &= (uint64_t(1) << (nrSpectra_ % 64)) - 1;
  }

  int nrSpectra_ = 0;
  AlignedBuffer<uint64_t> words_;  ///< words_[spectrum / 64], bit spectrum % 64
};

}  // namespace rtcp::correlator
