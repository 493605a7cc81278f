// correlator PARSET: the compute ranks, started by mpirun. Each rank fetches its stations'
// blocks from ionproc over the link, the ranks exchange them so that each holds every
// station of its subbands (or, lent from ionproc's shared memory, each takes its own
// subbands of every station), and each correlates its subbands (and forms their beams)
// and sends the blocks back to ionproc (CorrelatorMain.h, CorrelatorPipeline.h,
// WorkDistribution.h).
//
//   mpirun -np N correlator PARSET --secret-file FILE --ionproc tcp:HOST:PORT [--threads T]
#include "CorrelatorMain.h"

int main(int argc, char** argv) { return rtcp::correlator::correlatorMain(argc, argv, nullptr); }
