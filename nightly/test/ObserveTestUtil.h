#pragma once
// Helpers of the tests that run the real observe and nightly executables.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "TestPrograms.h"

namespace rtcp::nightly::test {

using rtcp::test::readFile;

/// Runs a shell command; its exit code (-1 when it did not exit normally).
inline int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A fresh temporary directory, removed at the end unless RTCP_KEEP_TEST_DIRS is set.
struct TempDir {
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/rtcp-nightly-XXXXXX";
    path = mkdtemp(pattern.data());
  }
  ~TempDir() {
    if (!std::getenv("RTCP_KEEP_TEST_DIRS")) std::filesystem::remove_all(path);
  }
  std::string path;
};

}  // namespace rtcp::nightly::test
