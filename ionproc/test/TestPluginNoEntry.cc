// A shared object that is no plug-in: it lacks the entry point.
extern "C" int rtcp_not_a_plugin() { return 42; }
