#pragma once
// Running the project's executables from tests: started with their standard output and
// error in a log file, waited for, their exit codes.
#include <sys/types.h>

#include <string>
#include <vector>

namespace rtcp::test {

/// Starts a program (arguments[0] a path) with standard error and output into a log;
/// returns its process id.
pid_t startProgram(const std::vector<std::string>& arguments, const std::string& log);
/// Waits for a started program; its exit code (128 + signal when killed).
int waitProgram(pid_t pid);
/// Runs a program to its end; its exit code (128 + signal when killed).
int runProgram(const std::vector<std::string>& arguments, const std::string& log);
/// A whole text file ("" when it cannot be read).
std::string readFile(const std::string& path);

/// The exit code of a skipped test: register such a test with the CTest property
/// SKIP_RETURN_CODE 77, so that a skip shows as skipped, never as passed.
constexpr int kSkipReturnCode = 77;
/// Says why the test cannot run here and ends the test program with kSkipReturnCode.
[[noreturn]] void skipTest(const std::string& why);

}  // namespace rtcp::test
