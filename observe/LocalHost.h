#pragma once
/// \file LocalHost.h
/// Whether a host named in a parset (udp:HOST:PORT, locations HOST:DIR) is this machine,
/// and whether this machine can resolve it.

#include <string>
#include <vector>

namespace rtcp::observe {

/// True for localhost, 127.x.y.z, ::1, 0.0.0.0, this machine's host name (short or
/// fully qualified) and any address of one of its interfaces.
bool isLocalHost(const std::string& host);

/// The hosts of the list that do not resolve here (getaddrinfo fails, or gives no answer
/// within timeoutSeconds), each once, in list order; *unanswered (if given) counts those
/// without an answer. The names are looked up at once, in parallel, so a list of a
/// cluster's nodes takes as long as its slowest answer, at most the timeout.
std::vector<std::string> unresolvableHosts(const std::vector<std::string>& hosts,
                                           double timeoutSeconds = 3, size_t* unanswered = nullptr);

}  // namespace rtcp::observe
