#pragma once
// Hosts for tests of observations across machines, on one machine: network namespaces
// with their own names, addresses (198.18.0.0/15), /etc/hosts and disks, made and removed
// by hosts/test-hosts.sh. A test that cannot make them (not root) is skipped, never
// passed.

#include <sys/types.h>

#include <string>
#include <vector>

namespace rtcp::observe::test {

class TestHosts {
 public:
  /// Makes the hosts: launch is the launching host (observe runs there), hosts the others;
  /// absent names a host that /etc/hosts knows but that does not exist. Skips the test
  /// program (exit 77) when this machine cannot make namespaces.
  TestHosts(const std::string& launch, const std::vector<std::string>& hosts,
            const std::string& absent = "");
  ~TestHosts();  ///< kills what is left in the hosts and removes them
  TestHosts(const TestHosts&) = delete;
  TestHosts& operator=(const TestHosts&) = delete;

  /// mpiexec's remote shell for these hosts (observe --launcher-exec).
  std::string remoteShell() const { return directory_ + "/remote-shell"; }
  /// Where every host sees its own disk (a path the same on each, like /data).
  std::string disk() const { return directory_ + "/disk"; }
  /// A host's disk as the test sees it.
  std::string diskOf(const std::string& host) const;
  /// The command that runs a program (a path) on a host.
  std::vector<std::string> on(const std::string& host,
                              const std::vector<std::string>& command) const;
  /// The processes running on a host (in its network namespace).
  std::vector<pid_t> processes(const std::string& host) const;
  /// The processes on a host whose program is named program (/proc/PID/comm).
  std::vector<pid_t> processes(const std::string& host, const std::string& program) const;

 private:
  std::string directory_;
  std::string launch_;
  std::string script_;
};

}  // namespace rtcp::observe::test
