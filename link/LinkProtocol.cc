#include "LinkProtocol.h"

namespace rtcp::ion {

const char* toString(LinkOp op) {
  switch (op) {
    case LinkOp::kRead:
      return "read";
    case LinkOp::kWrite:
      return "write";
  }
  return "?";
}

LinkEndpoint LinkEndpoint::parse(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return LinkError("bad link endpoint '" + text + "': " + why +
                     " (expected tcp:HOST:PORT or unix:PATH)");
  };
  LinkEndpoint e;
  if (text.rfind("unix:", 0) == 0) {
    e.kind = Kind::kUnix;
    e.path = text.substr(5);
    if (e.path.empty()) throw bad("empty path");
    if (e.path.size() >= 108) throw bad("path longer than 107 bytes");
    return e;
  }
  if (text.rfind("tcp:", 0) != 0) throw bad("unknown kind");
  const std::string rest = text.substr(4);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) throw bad("missing port");
  e.kind = Kind::kTcp;
  e.host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    throw bad("port '" + port + "' is not a number from 0 to 65535");
  e.port = uint16_t(std::stoi(port));
  return e;
}

std::string LinkEndpoint::toString() const {
  return kind == Kind::kUnix ? "unix:" + path : "tcp:" + host + ":" + std::to_string(port);
}

}  // namespace rtcp::ion
