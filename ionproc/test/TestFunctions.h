#pragma once
// Forwarded functions of the test plug-in (TestPlugin.cc), declared once for both sides.
#include <cstdint>

#include "Forwarding.h"

namespace rtcp::ion::test {

/// out[i] = factor * in[i]; count = elements in + extra; returns the sum of extra.
RTCP_FORWARDED(scaleAndSum, double(int32_t factor, Span<float> in, Out<Span<float>> out,
                                   Out<int64_t> count, Span<int16_t> extra));
/// Throws on ionproc with a message naming the code.
RTCP_FORWARDED(failing, int32_t(int32_t code));
/// Declared, but no plug-in serves it.
RTCP_FORWARDED(notServed, void(int32_t x));

}  // namespace rtcp::ion::test
