// The settings observe gives local ranks: through /usr/bin/env before mpirun, and an
// operator's own UCX_TLS left alone.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "LocalRankEnvironment.h"

namespace rtcp::observe {
namespace {

class LocalRankEnvironmentTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(LocalRankEnvironmentTest);
  CPPUNIT_TEST(testSharedMemoryTransportsBeforeMpirun);
  CPPUNIT_TEST(testOperatorsSettingWins);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    const char* set = std::getenv("UCX_TLS");
    saved_ = set ? std::optional<std::string>(set) : std::nullopt;
    ::unsetenv("UCX_TLS");
  }
  void tearDown() override {
    if (saved_)
      ::setenv("UCX_TLS", saved_->c_str(), 1);
    else
      ::unsetenv("UCX_TLS");
  }

  void testSharedMemoryTransportsBeforeMpirun() {
    const std::vector<std::string> command =
        withLocalRankEnvironment({"/usr/bin/mpirun", "-np", "2", "correlator"});
    const std::vector<std::string> expected{
        "/usr/bin/env", "UCX_TLS=sm,self", "/usr/bin/mpirun", "-np", "2", "correlator"};
    CPPUNIT_ASSERT(command == expected);
  }

  void testOperatorsSettingWins() {
    ::setenv("UCX_TLS", "tcp,self", 1);
    CPPUNIT_ASSERT(localRankEnvironment().empty());
    const std::vector<std::string> command{"/usr/bin/mpirun", "-np", "2", "correlator"};
    CPPUNIT_ASSERT(withLocalRankEnvironment(command) == command);
  }

 private:
  std::optional<std::string> saved_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(LocalRankEnvironmentTest);

}  // namespace
}  // namespace rtcp::observe
