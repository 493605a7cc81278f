// copyNonTemporal against memcpy on random bytes: every size around the vector and line
// widths and the threshold, at every alignment of source and destination within a line,
// with the bytes around the destination untouched.
#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <random>
#include <vector>

#include "NonTemporalCopy.h"

namespace rtcp::ion {
namespace {

class NonTemporalCopyTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(NonTemporalCopyTest);
  CPPUNIT_TEST(testEqualsMemcpyAtEverySizeAndAlignment);
  CPPUNIT_TEST(testThresholdPathEqualsMemcpy);
  CPPUNIT_TEST_SUITE_END();

  static constexpr size_t kGuard = 64;

  /// Copies n random bytes from src offset a to dst offset b with `copy`; checks the copy
  /// and that the guard bytes on either side kept their value.
  template <typename Copy>
  static void check(Copy copy, size_t n, size_t a, size_t b, std::mt19937& random) {
    alignas(64) static uint8_t src[70000 + 2 * kGuard];
    alignas(64) static uint8_t dst[70000 + 3 * kGuard];
    for (size_t i = 0; i < n + a; ++i) src[i] = uint8_t(random());
    std::memset(dst, 0xa5, sizeof dst);
    copy(dst + kGuard + b, src + a, n);
    nonTemporalFence();
    CPPUNIT_ASSERT_MESSAGE(
        "size " + std::to_string(n) + ", offsets " + std::to_string(a) + "/" + std::to_string(b),
        std::memcmp(dst + kGuard + b, src + a, n) == 0);
    for (size_t i = 0; i < kGuard + b; ++i) CPPUNIT_ASSERT_EQUAL(0xa5, int(dst[i]));
    for (size_t i = kGuard + b + n; i < kGuard + b + n + kGuard; ++i)
      CPPUNIT_ASSERT_EQUAL(0xa5, int(dst[i]));
  }

  void testEqualsMemcpyAtEverySizeAndAlignment() {
    std::mt19937 random(7);
    const std::vector<size_t> sizes = {0,   1,   31,  63,  64,  65,   127,  128,  191,
                                       255, 256, 257, 319, 320, 1000, 4095, 4096, 65537};
    for (size_t n : sizes)
      for (size_t a = 0; a < 64; a += 7)
        for (size_t b = 0; b < 64; b += 5) check(copyNonTemporalAnySize, n, a, b, random);
  }

  void testThresholdPathEqualsMemcpy() {
    std::mt19937 random(8);
    for (size_t n : {kMinNonTemporalBytes - 1, kMinNonTemporalBytes, size_t(49152 * 8 / 6)})
      for (size_t b : {size_t(0), size_t(8), size_t(33)}) check(copyNonTemporal, n, 3, b, random);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(NonTemporalCopyTest);

}  // namespace
}  // namespace rtcp::ion
