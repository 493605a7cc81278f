// The main of every CppUnit test executable: runs all registered suites, or the ones
// named on the command line (e.g. `common_test ParsetTest`).
#include <cppunit/BriefTestProgressListener.h>
#include <cppunit/CompilerOutputter.h>
#include <cppunit/TestResult.h>
#include <cppunit/TestResultCollector.h>
#include <cppunit/TestRunner.h>
#include <cppunit/extensions/TestFactoryRegistry.h>

#include <iostream>

int main(int argc, char** argv) {
  CppUnit::TestResult controller;
  CppUnit::TestResultCollector result;
  controller.addListener(&result);
  CppUnit::BriefTestProgressListener progress;
  controller.addListener(&progress);

  CppUnit::TestRunner runner;
  runner.addTest(CppUnit::TestFactoryRegistry::getRegistry().makeTest());
  try {
    if (argc > 1) {
      for (int i = 1; i < argc; ++i) runner.run(controller, argv[i]);
    } else {
      runner.run(controller);
    }
  } catch (const std::exception& e) {
    std::cerr << "test selection failed: " << e.what() << "\n";
    return 2;
  }
  CppUnit::CompilerOutputter(&result, std::cerr).write();
  return result.wasSuccessful() ? 0 : 1;
}
