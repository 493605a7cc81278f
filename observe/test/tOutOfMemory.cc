// The kernel's out-of-memory killer, for real: a child process in a memory cgroup of
// 32 MiB touches 256 MiB, the kernel kills it, and observe's reading of the kernel log
// (MemoryPlan.h: killedForMemory, what observe uses to say "killed: out of memory")
// finds that kill by its pid and by its name. Needs root and a memory cgroup (v1 or v2);
// skipped otherwise.
#include <cppunit/extensions/HelperMacros.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "MemoryPlan.h"
#include "TestPrograms.h"

namespace rtcp::observe::test {
namespace {

/// A memory cgroup of its own with a limit, removed at the end.
class MemoryCgroup {
 public:
  explicit MemoryCgroup(uint64_t limitBytes) {
    const std::string name = "rtcp-oom-test-" + std::to_string(getpid());
    for (const auto& [root, limitFile, procsFile] :
         {std::tuple{"/sys/fs/cgroup/memory", "memory.limit_in_bytes", "tasks"},
          std::tuple{"/sys/fs/cgroup", "memory.max", "cgroup.procs"},
          std::tuple{"/sys/fs/cgroup/unified", "memory.max", "cgroup.procs"}}) {
      const std::string dir = std::string(root) + "/" + name;
      if (::mkdir(dir.c_str(), 0700) != 0) continue;
      if (std::filesystem::exists(dir + "/" + limitFile) &&
          write(dir + "/" + limitFile, std::to_string(limitBytes))) {
        path_ = dir;
        procs_ = dir + "/" + procsFile;
        return;
      }
      ::rmdir(dir.c_str());
    }
  }
  ~MemoryCgroup() {
    if (!path_.empty()) ::rmdir(path_.c_str());
  }
  bool usable() const { return !path_.empty(); }
  bool add(pid_t pid) const { return write(procs_, std::to_string(pid)); }

 private:
  static bool write(const std::string& file, const std::string& text) {
    std::ofstream out(file);
    out << text << std::flush;
    return bool(out);
  }
  std::string path_, procs_;
};

}  // namespace

class OutOfMemoryTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(OutOfMemoryTest);
  CPPUNIT_TEST(testKernelKillIsFoundInItsLog);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testKernelKillIsFoundInItsLog() {
    if (geteuid() != 0) rtcp::test::skipTest("an out-of-memory kill in a cgroup needs root");
    const MemoryCgroup cgroup(32 << 20);
    if (!cgroup.usable()) rtcp::test::skipTest("no memory cgroup can be made here");
    const double since = bootSeconds();
    int go[2];
    CPPUNIT_ASSERT_EQUAL(0, ::pipe(go));
    const pid_t child = ::fork();
    CPPUNIT_ASSERT(child >= 0);
    if (child == 0) {  // waits until it is in the cgroup, then touches 256 MiB
      ::prctl(PR_SET_NAME, "rtcp-hungry");
      char byte = 0;
      if (::read(go[0], &byte, 1) != 1) ::_exit(2);
      const size_t bytes = size_t(256) << 20;
      void* memory =
          ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (memory == MAP_FAILED) ::_exit(3);
      std::memset(memory, 1, bytes);
      ::_exit(0);
    }
    ::close(go[0]);
    const bool added = cgroup.add(child);
    CPPUNIT_ASSERT_EQUAL(ssize_t(1), ::write(go[1], "g", 1));
    ::close(go[1]);
    int status = 0;
    CPPUNIT_ASSERT_EQUAL(child, ::waitpid(child, &status, 0));
    CPPUNIT_ASSERT_MESSAGE("the child could not be put into the cgroup", added);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      rtcp::test::skipTest("the cgroup's limit was not enforced (swap?)");
    CPPUNIT_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    const int kmsg = ::open("/dev/kmsg", O_RDONLY | O_CLOEXEC);
    if (kmsg < 0) rtcp::test::skipTest("the kernel log (/dev/kmsg) cannot be read here");
    ::close(kmsg);
    CPPUNIT_ASSERT_MESSAGE("the kernel log does not name the killed pid",
                           killedForMemory(child, "", since));
    CPPUNIT_ASSERT_MESSAGE("the kernel log does not name the killed program",
                           killedForMemory(-1, "rtcp-hungry", since));
    CPPUNIT_ASSERT(!killedForMemory(child, "", bootSeconds() + 1));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(OutOfMemoryTest);

}  // namespace rtcp::observe::test
