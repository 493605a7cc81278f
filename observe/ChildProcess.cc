#include "ChildProcess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace rtcp::observe {

ChildProcess::ChildProcess(std::string name, std::vector<std::string> arguments,
                           std::string logPath, ChildStreams streams)
    : name_(std::move(name)),
      arguments_(std::move(arguments)),
      logPath_(std::move(logPath)),
      streams_(std::move(streams)) {}

ChildProcess::~ChildProcess() {
  if (running()) kill();
}

std::string ChildProcess::commandLine() const {
  std::string line;
  for (const std::string& a : arguments_) line += (line.empty() ? "" : " ") + a;
  return line;
}

void ChildProcess::start() {
  const int log = open(logPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0)
    throw std::runtime_error(name_ + ": cannot create log " + logPath_ + ": " +
                             std::strerror(errno));
  const std::string& inputPath =
      streams_.inputPath.empty() ? std::string("/dev/null") : streams_.inputPath;
  const int input = open(inputPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (input < 0) {
    close(log);
    throw std::runtime_error(name_ + ": cannot open " + inputPath + ": " + std::strerror(errno));
  }
  const int output =
      streams_.outputPath.empty()
          ? fcntl(log, F_DUPFD_CLOEXEC, 0)
          : open(streams_.outputPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (output < 0) {
    close(log), close(input);
    throw std::runtime_error(name_ + ": cannot create " + streams_.outputPath + ": " +
                             std::strerror(errno));
  }
  int report[2];  // exec failures travel back through a close-on-exec pipe
  if (pipe2(report, O_CLOEXEC) != 0) {
    const int error = errno;
    close(log), close(input), close(output);
    throw std::runtime_error(name_ + ": pipe: " + std::strerror(error));
  }
  std::vector<char*> argv;
  for (const std::string& a : arguments_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(name_ + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    // Should observe die (SIGKILL, a crash), the part is stopped as by observe's SIGTERM:
    // nothing of an observation runs on unsupervised. (mpiexec forwards it to the parts it
    // started, here and on other hosts.)
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // observe died before prctl
    setpgid(0, 0);
    // observe blocks its stop signals, and so does this child until here: a signal sent
    // meanwhile is pending. A part that takes them itself keeps them blocked through exec
    // (a pending one waits for its main); any other part must not inherit the block.
    sigset_t mask;
    sigemptyset(&mask);
    if (streams_.stopSignalsBlocked)
      for (const int stop : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, stop);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    dup2(input, STDIN_FILENO);
    dup2(output, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execvp(argv[0], argv.data());
    const int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so that signal() works before the child ran
  close(log);
  close(input);
  close(output);
  close(report[1]);
  int error = 0;
  const ssize_t n = read(report[0], &error, sizeof error);
  close(report[0]);
  pid_ = pid;
  if (n == sizeof error) {
    waitFor(5);
    throw std::runtime_error(name_ + ": cannot execute " + arguments_[0] + ": " +
                             std::strerror(error));
  }
}

void ChildProcess::signal(int signalNumber) {
  if (running()) ::kill(streams_.signalGroup ? -pid_ : pid_, signalNumber);
}

bool ChildProcess::poll() {
  if (!started()) return false;
  if (exitCode_) return true;
  int status = 0;
  rusage usage{};
  const pid_t r = wait4(pid_, &status, WNOHANG, &usage);
  if (r == pid_) reaped(status, usage);
  if (r < 0 && errno == ECHILD) exitCode_ = 255;
  return exitCode_.has_value();
}

bool ChildProcess::waitFor(double timeoutSeconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

void ChildProcess::kill() {
  if (!running()) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  rusage usage{};
  if (wait4(pid_, &status, 0, &usage) == pid_) reaped(status, usage);
}

void ChildProcess::reaped(int status, const rusage& usage) {
  exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  cpuSeconds_ = seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace rtcp::observe
