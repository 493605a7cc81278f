#include "RunDirectory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

/// The files every run of observe leaves in its directory.
constexpr const char* kRunFiles[] = {"observation.parset", "observation.secret", "summary.json",
                                     "summary.txt"};

}  // namespace

std::vector<std::string> earlierRunProblems(const ObservationPlan& plan) {
  std::vector<std::string> problems;
  std::error_code error;
  for (const char* name : kRunFiles) {
    const fs::path file = fs::path(plan.directory) / name;
    if (fs::exists(fs::symlink_status(file, error)))
      problems.push_back("the observation directory " + plan.directory +
                         " holds another run's files (" + file.string() +
                         "): choose a new directory with --dir, or remove them");
    if (!problems.empty()) break;  // one message for the directory
  }
  struct stat status {};
  if (::stat(plan.directory.c_str(), &status) == 0 && (status.st_mode & S_IWOTH) &&
      !(status.st_mode & S_ISVTX))
    problems.push_back("the observation directory " + plan.directory +
                       " is writable by every user, who could replace the observation's files: "
                       "choose another directory with --dir");
  // Outputs of another run where this one would write (storage-sink would append to an
  // MS of this run only, and make each beam-formed file anew).
  const auto existingOf = [&](const std::vector<std::string>& paths, const std::string& what,
                              const std::string& rule) {
    std::vector<std::string> existing;
    for (const std::string& path : paths)
      if (fs::exists(fs::symlink_status(path, error))) existing.push_back(path);
    if (existing.empty()) return;
    std::string names;
    for (size_t i = 0; i < existing.size() && i < 4; ++i) names += (i ? ", " : "") + existing[i];
    if (existing.size() > 4) names += " and " + std::to_string(existing.size() - 4) + " more";
    problems.push_back(std::to_string(existing.size()) + " of the observation's " +
                       std::to_string(paths.size()) + " " + what +
                       " exist already, from another run (" + names + "): " + rule +
                       "; remove them or choose other output locations");
  };
  existingOf(plan.measurementSets, "MeasurementSets", "a run writes only into MSs it made");
  existingOf(plan.beamFormedFiles, "beam-formed files", "a run would write its own over them");
  return problems;
}

DirectoryLock::DirectoryLock(const std::string& directory) {
  const std::string path = directory + "/" + kFileName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot open the lock file " + path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    std::string holder;
    std::getline(std::ifstream(path), holder);
    ::close(fd_);
    throw std::runtime_error(
        "the observation directory " + directory + " is in use by another observation" +
        (error == EWOULDBLOCK && !holder.empty() ? " (observe process " + holder + ")"
                                                 : " (" + std::string(std::strerror(error)) + ")") +
        ": choose another directory with --dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw std::runtime_error("cannot write the lock file " + path + ": " + why);
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace rtcp::observe
