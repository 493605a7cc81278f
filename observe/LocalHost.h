#pragma once
/// \file LocalHost.h
/// Whether a host named in a parset (udp:HOST:PORT, locations HOST:DIR) is this machine.

#include <string>

namespace rtcp::observe {

/// True for localhost, 127.x.y.z, ::1, 0.0.0.0, this machine's host name (short or
/// fully qualified) and any address of one of its interfaces.
bool isLocalHost(const std::string& host);

}  // namespace rtcp::observe
