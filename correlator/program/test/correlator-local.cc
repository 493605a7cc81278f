// correlator-local PARSET --dump DIR: the correlator program of the tests, which runs
// without ionproc: each rank reads its stations' recordings itself (LocalMode.h).
// With --ionproc it is the correlator program.
//
//   mpirun -np N correlator-local PARSET --dump DIR [--threads T] [--exchange ...]
#include "LocalMode.h"

int main(int argc, char** argv) {
  rtcp::correlator::test::DumpMode mode;
  return rtcp::correlator::correlatorMain(argc, argv, &mode);
}
