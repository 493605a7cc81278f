// nightly SCHEDULE [--now] [--report DIR]: runs a schedule of parsets with observe, one
// after another, and writes a report (report.txt, report.html). See README.md.
#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "NightlyConsole.h"
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
  std::string schedulePath, reportDirectory, consoleAddress;
  double consoleLinger = 0;
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
      "stop observe this many seconds after the observation's planned end")(
      "console", po::value<std::string>(&consoleAddress)->value_name("[HOST:]PORT"),
      "serve the schedule as a read-only web page (each observation's state, a link to the "
      "running one's console, the report pages) on PORT of HOST (default 127.0.0.1: this "
      "machine only); every observe then serves its own console on HOST")(
      "console-linger", po::value<double>(&consoleLinger)->default_value(0)->value_name("SECONDS"),
      "keep serving the schedule this long after the report is written");
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

  std::unique_ptr<NightlyConsole> console;
  if (!consoleAddress.empty()) {
    try {
      std::filesystem::create_directories(options.reportDirectory);
      console = std::make_unique<NightlyConsole>(
          rtcp::console::ConsoleAddress::parse(consoleAddress), schedule, options.reportDirectory);
    } catch (const std::exception& e) {
      RTCP_LOG_ERROR("nightly", "--console: " << e.what());
      return 2;
    }
    options.console = console->observeConsole();
    options.started = [&](int index, const std::string& directory) {
      console->running(index, directory);
    };
  }
  NightlyReport report(options.reportDirectory, schedulePath, started);
  ObservationRunner runner(options);
  int index = 0;
  for (const ScheduleEntry& entry : schedule.entries()) {
    ObservationResult result = runner.run(entry, ++index);
    if (console) console->finished(result);
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
  std::cout << report.textPath() << "\n" << report.htmlPath() << "\n" << std::flush;
  if (console) {
    console->nightFinished();
    if (consoleLinger > 0) {
      RTCP_LOG_INFO("nightly",
                    "console at " << console->url() << " for another " << consoleLinger << " s");
      const double until = rtcp::wallClock() + consoleLinger;
      while (!ObservationRunner::stopRequested() && rtcp::wallClock() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return report.nrFailed() == 0 ? 0 : 1;
}
