#pragma once
/// \file NonTemporalCopy.h
/// A copy into memory that this process does not read again soon (the rows a block server
/// hands to the ranks): non-temporal stores do not first read the destination's cache
/// lines from memory, which a plain memcpy of rows far larger than the caches does.

#include <cstddef>
#include <cstdint>

namespace rtcp::ion {

/// memcpy(dst, src, n), non-temporal from dst's first 64-byte boundary on where it pays
/// (AVX-512, n >= kMinNonTemporalBytes); a plain memcpy otherwise. The stores are weakly
/// ordered: fence (nonTemporalFence) before another thread or process may read dst.
void copyNonTemporal(uint8_t* dst, const uint8_t* src, size_t n);
/// Makes the non-temporal stores made so far visible before any later store.
void nonTemporalFence();

/// Below this a copy is plain: the head and tail of a short copy are most of it.
constexpr size_t kMinNonTemporalBytes = 4096;

/// The non-temporal path whatever the size (for tests); plain memcpy without AVX-512.
void copyNonTemporalAnySize(uint8_t* dst, const uint8_t* src, size_t n);

}  // namespace rtcp::ion
