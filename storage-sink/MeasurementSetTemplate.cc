#include "MeasurementSetTemplate.h"

#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/Tables/TableLock.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "CasacoreLock.h"
#include "FileSystemSync.h"
#include "MeasurementSetCreator.h"
#include "ParallelFor.h"

namespace rtcp::storage {
namespace {

namespace fs = std::filesystem;

/// Threads that copy MSs: mostly waiting for the file system to create inodes.
constexpr int kCreatingThreads = 4;

/// Copies an MS's directory tree, without casacore's lock files (each table gets its own
/// when opened).
void copyTables(const fs::path& from, const fs::path& to) {
  fs::create_directory(to);
  for (const fs::directory_entry& entry : fs::directory_iterator(from)) {
    const fs::path target = to / entry.path().filename();
    if (entry.is_directory())
      copyTables(entry.path(), target);
    else if (entry.path().filename() != "table.lock")
      fs::copy_file(entry.path(), target);
  }
}

/// Runs make(), which makes the MS at path; when it fails, removes what it made (no half-made
/// MS for a restart to trip over) and throws an error naming the MS.
void makeOrRemove(const std::string& path, const std::function<void()>& make) {
  try {
    make();
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove_all(path, ignored);
    throw std::runtime_error(path + ": cannot create the MeasurementSet: " + e.what());
  }
}

/// Makes path a copy of the MS at from with the subband's own tables rewritten.
void copyMeasurementSet(const std::string& from, const std::string& path,
                        const MeasurementSetDescription& d) {
  copyTables(from, path);
  std::lock_guard lock(casacoreMutex());
  rewriteSubbandTables(path, d);
}

}  // namespace

MeasurementSetDescription templateKey(MeasurementSetDescription d) {
  d.beam = 0;
  d.ra = d.dec = 0;
  d.tileBeam.angle1 = d.tileBeam.angle2 = 0;  // its type is in FIELD's column description
  d.targets.clear();
  d.subbandIndex = d.subbandNumber = 0;
  d.subbandFrequency = 0;
  d.channelFrequencies.assign(d.channelFrequencies.size(), 0.0);
  return d;
}

int createMeasurementSets(const std::vector<MeasurementSetDescription>& descriptions,
                          const std::vector<std::string>& paths,
                          const std::function<void(int)>& created) {
  if (descriptions.size() != paths.size())
    throw std::invalid_argument("createMeasurementSets: one description per path");
  std::vector<std::string> directories;
  std::vector<size_t> toMake;  // [index into paths]
  for (size_t i = 0; i < paths.size(); ++i) {
    if (fs::exists(paths[i])) continue;
    const fs::path parent = fs::absolute(paths[i]).parent_path();
    fs::create_directories(parent);
    if (std::find(directories.begin(), directories.end(), parent) == directories.end())
      directories.push_back(parent.string());
    toMake.push_back(i);
  }
  // The first MS of each kind from scratch, one after another; the rest copies of it.
  std::vector<std::pair<MeasurementSetDescription, std::string>> templates;  // [key, path]
  std::vector<std::pair<size_t, size_t>> copies;  // [index into paths, index into templates]
  std::mutex progressMutex;
  int made = 0;
  const auto madeOne = [&] {
    std::lock_guard lock(progressMutex);
    ++made;
    if (created) created(made);
  };
  for (size_t i : toMake) {
    MeasurementSetDescription key = templateKey(descriptions[i]);
    const auto known = std::find_if(templates.begin(), templates.end(),
                                    [&](const auto& t) { return t.first == key; });
    if (known != templates.end()) {
      copies.emplace_back(i, size_t(known - templates.begin()));
      continue;
    }
    makeOrRemove(paths[i], [&] {
      std::lock_guard lock(casacoreMutex());
      createMeasurementSet(paths[i], descriptions[i], false);  // closed (written) on return
    });
    templates.emplace_back(std::move(key), paths[i]);
    madeOne();
  }
  // Copies on several threads: copying files waits for the file system and needs no lock.
  forEachInParallel(copies.size(), kCreatingThreads, [&](size_t c) {
    const auto [i, t] = copies[c];
    makeOrRemove(paths[i],
                 [&] { copyMeasurementSet(templates[t].second, paths[i], descriptions[i]); });
    madeOne();
  });
  syncFileSystems(directories);
  return made;
}

}  // namespace rtcp::storage
