#include "TestPrograms.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "rtcp/Files.h"

namespace rtcp::test {

pid_t startProgram(const std::vector<std::string>& arguments, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stderr)) _exit(126);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    std::vector<char*> argv;
    for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int waitProgram(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int runProgram(const std::vector<std::string>& arguments, const std::string& log) {
  return waitProgram(startProgram(arguments, log));
}

std::string readFile(const std::string& path) { return tryReadFile(path).value_or(""); }

void skipTest(const std::string& why) {
  std::cerr << "SKIPPED: " << why << std::endl;
  std::exit(kSkipReturnCode);
}

}  // namespace rtcp::test
