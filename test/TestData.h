#pragma once
// Where tests find the project's shipped test data and executables.
#include <cstdlib>
#include <string>

namespace rtcp::test {

/// The source tree (RTCP_SOURCE_DIR, set by CTest), for test/data and parsets.
inline std::string sourceDir() {
  const char* dir = std::getenv("RTCP_SOURCE_DIR");
  return dir ? dir : RTCP_TEST_SOURCE_DIR;
}
/// The build tree (RTCP_BINARY_DIR), for the executables under test.
inline std::string binaryDir() {
  const char* dir = std::getenv("RTCP_BINARY_DIR");
  return dir ? dir : RTCP_TEST_BINARY_DIR;
}
inline std::string testDataDir() { return sourceDir() + "/test/data"; }

}  // namespace rtcp::test
