#include "TestHosts.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "TestPrograms.h"

namespace rtcp::observe::test {
namespace {

std::string quote(const std::string& text) { return "'" + text + "'"; }

}  // namespace

TestHosts::TestHosts(const std::string& launch, const std::vector<std::string>& hosts,
                     const std::string& absent)
    : directory_(std::filesystem::temp_directory_path() /
                 ("rtcp-hosts-" + std::to_string(getpid()))),
      launch_(launch),
      script_(std::string(RTCP_TEST_SOURCE_DIR) + "/observe/test/hosts/test-hosts.sh") {
  const std::string log = directory_ + ".log";
  std::ostringstream
      command;  // (a stream: GCC 12 misreads a chain of string + as overlapping copies)
  command << script_ << " create " << quote(directory_) << " " << quote(launch);
  for (const std::string& host : hosts) command << " " << quote(host);
  if (!absent.empty()) command << " --absent " << quote(absent);
  command << " > " << log << " 2>&1";
  const int status = std::system(command.str().c_str());
  const std::string output = rtcp::test::readFile(log);
  std::filesystem::remove(log);
  if (WIFEXITED(status) && WEXITSTATUS(status) == rtcp::test::kSkipReturnCode)
    rtcp::test::skipTest("no test hosts: " + output);
  if (status != 0) throw std::runtime_error("test-hosts.sh create failed: " + output);
}

TestHosts::~TestHosts() {
  if (std::system((script_ + " remove " + quote(directory_)).c_str()) != 0) {
    // Nothing to do about it here; the next run removes what this one left.
  }
}

std::string TestHosts::diskOf(const std::string& host) const {
  return host == launch_
             ? disk()
             : directory_ + "/disks/" + host;  // the launching host keeps this machine's files
}

std::vector<std::string> TestHosts::on(const std::string& host,
                                       const std::vector<std::string>& command) const {
  std::vector<std::string> arguments{directory_ + "/on", host};
  arguments.insert(arguments.end(), command.begin(), command.end());
  return arguments;
}

std::vector<pid_t> TestHosts::processes(const std::string& host) const {
  const std::string list = directory_ + "/pids";
  const std::string id = std::filesystem::path(directory_).filename().string();
  if (std::system(("ip netns pids " + id + "-" + host + " > " + list + " 2>/dev/null").c_str()) !=
      0)
    return {};
  std::istringstream in(rtcp::test::readFile(list));
  std::vector<pid_t> pids;
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

std::vector<pid_t> TestHosts::processes(const std::string& host, const std::string& program) const {
  std::vector<pid_t> found;
  for (const pid_t pid : processes(host)) {
    std::string name = rtcp::test::readFile("/proc/" + std::to_string(pid) + "/comm");
    if (!name.empty() && name.back() == '\n') name.pop_back();
    if (name == program) found.push_back(pid);
  }
  return found;
}

}  // namespace rtcp::observe::test
