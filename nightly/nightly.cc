// nightly SCHEDULE [--now] [--report DIR]: runs a schedule of parsets with observe, one
// after another, and writes a report (report.txt, report.html). See README.md.
#include <boost/program_options.hpp>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "NightlyReport.h"
#include "ObservationRunner.h"
#include "Schedule.h"
#include "rtcp/CommandLine.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace po = boost::program_options;
using namespace rtcp::nightly;

namespace {

const char* const kDefaultObserve = RTCP_OBSERVE_EXECUTABLE;  // observe of this build tree

std::string defaultReportDirectory(double now) {
  return "nightly-" + rtcp::formatUtc(now).substr(0, 10);
}

void onSignal(int) { ObservationRunner::requestStop(); }

}  // namespace

int main(int argc, char** argv) {
  rtcp::Logger::setProcessName("nightly");
  std::string schedulePath, reportDirectory;
  bool now = false;
  RunnerOptions options;
  po::options_description visible(
      "usage: nightly SCHEDULE [--now] [--report DIR]\n\n"
      "Runs the parsets a schedule lists with observe, in order, waiting for each start\n"
      "time, carrying on past failures, and writes report.txt and report.html. Exits\n"
      "non-zero when any observation failed.\n\noptions");
  visible.add_options()("help,h", "this help")(
      "now", po::bool_switch(&now), "shift the schedule so that the first observation starts now")(
      "report", po::value<std::string>(&reportDirectory),
      "report directory (default ./nightly-<UTC date>)")(
      "observe", po::value<std::string>(&options.observe)->default_value(kDefaultObserve),
      "the observe executable to run")(
      "lead", po::value<double>(&options.leadSeconds)->default_value(30),
      "seconds before its start time to launch observe for an observation at its own time")(
      "max-overrun", po::value<double>(&options.maxOverrunSeconds)->default_value(600),
      "stop observe this many seconds after the observation's planned end");
  try {
    if (!rtcp::parseCommandLine(
            argc, argv, visible, "SCHEDULE", schedulePath,
            "\nSchedule lines: [YYYY-MM-DD HH:MM:SS] PARSET   (# comments; paths relative to the "
            "schedule file)\n"))
      return 0;
  } catch (const po::error& e) {
    RTCP_LOG_ERROR("nightly", e.what() << " (see --help)");
    return 2;
  }
  const double started = rtcp::wallClock();
  Schedule schedule;
  try {
    schedule = Schedule::fromFile(schedulePath);
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("nightly", e.what());
    return 2;
  }
  schedule.plan(now, started);
  if (reportDirectory.empty()) reportDirectory = defaultReportDirectory(started);
  options.reportDirectory = std::filesystem::absolute(reportDirectory).lexically_normal().string();
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);

  NightlyReport report(options.reportDirectory, schedulePath, started);
  ObservationRunner runner(options);
  int index = 0;
  for (const ScheduleEntry& entry : schedule.entries()) {
    ObservationResult result = runner.run(entry, ++index);
    if (result.ok)
      RTCP_LOG_INFO("nightly", "observation " << index << " (" << entry.parset << ") ok");
    else
      RTCP_LOG_ERROR("nightly", "observation " << index << " (" << entry.parset
                                               << ") failed: " << result.reason);
    report.add(std::move(result));
  }
  RTCP_LOG_INFO("nightly", report.results().size() << " observations, " << report.nrFailed()
                                                   << " failed; report: " << report.textPath()
                                                   << ", " << report.htmlPath());
  std::cout << report.textPath() << "\n" << report.htmlPath() << "\n";
  return report.nrFailed() == 0 ? 0 : 1;
}
