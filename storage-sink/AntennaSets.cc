#include "AntennaSets.h"

#include <cctype>
#include <stdexcept>

namespace rtcp::storage {
namespace {

/// One antenna set's selectors (RCU by RCU) for core, remote and international stations,
/// as LOFAR's AntennaSets.conf gives them.
struct AntennaSetDefinition {
  const char* name;
  const char* core;
  const char* remote;
  const char* international;
};

constexpr const char* kInnerRemoteTiles = "10.4H6.8H6.12H4.12H6.8H6.4H10.";

constexpr AntennaSetDefinition kAntennaSets[] = {
    {"LBA_INNER", "46hh2..", "46hh2..", "192h"},
    {"LBA_OUTER", "96l", "96l", "192h"},
    {"LBA_SPARSE_EVEN", "23hhll1..ll", "23hhll1..ll", "192h"},
    {"LBA_SPARSE_ODD", "23llhh1ll..", "23llhh1ll..", "192h"},
    {"LBA_X", "46hl2.l", "46hl2.l", "96h."},
    {"LBA_Y", "46lh2l.", "46lh2l.", "96.h"},
    {"HBA_ZERO", "48H48.", "96H", "192H"},
    {"HBA_ONE", "48.48H", "96H", "192H"},
    {"HBA_DUAL", "96H", "96H", "192H"},
    {"HBA_JOINED", "96H", "96H", "192H"},
    {"HBA_ZERO_INNER", "48H48.", kInnerRemoteTiles, "192H"},
    {"HBA_ONE_INNER", "48.48H", kInnerRemoteTiles, "192H"},
    {"HBA_DUAL_INNER", "96H", kInnerRemoteTiles, "192H"},
    {"HBA_JOINED_INNER", "96H", kInnerRemoteTiles, "192H"},
};

const char* selectorOf(const AntennaSetDefinition& set, StationType type) {
  switch (type) {
    case StationType::Core:
      return set.core;
    case StationType::Remote:
      return set.remote;
    case StationType::International:
      return set.international;
  }
  return set.international;
}

/// The input of every RCU: a selector is a sequence of [count]pattern, the pattern repeated
/// count times ("46hh2.." = 46 x "hh" then 2 x "..").
std::string expandSelector(const std::string& selector) {
  std::string inputs;
  for (size_t i = 0; i < selector.size();) {
    size_t count = 0;
    for (; i < selector.size() && std::isdigit(static_cast<unsigned char>(selector[i])); ++i)
      count = 10 * count + size_t(selector[i] - '0');
    std::string pattern;
    for (; i < selector.size() && !std::isdigit(static_cast<unsigned char>(selector[i])); ++i)
      pattern += selector[i];
    for (size_t k = 0; k < std::max<size_t>(count, 1); ++k) inputs += pattern;
  }
  return inputs;
}

}  // namespace

StationType stationType(const std::string& station) {
  if (station.starts_with("CS")) return StationType::Core;
  if (station.starts_with("RS")) return StationType::Remote;
  return StationType::International;
}

std::string antennaSetOfField(const std::string& antennaSet, const std::string& fieldName) {
  if (fieldName == "HBA0") return "HBA_ZERO";
  if (fieldName == "HBA1") return "HBA_ONE";
  return antennaSet;
}

std::optional<ElementRcus> elementRcus(const std::string& antennaSet, StationType type,
                                       size_t nrElements) {
  for (const AntennaSetDefinition& set : kAntennaSets) {
    if (antennaSet != set.name) continue;
    const std::string inputs = expandSelector(selectorOf(set, type));
    ElementRcus rcus(nrElements, {-1, -1});
    for (size_t rcu = 0; rcu < inputs.size(); ++rcu) {
      if (inputs[rcu] == '.') continue;
      // LOFAR's position index: [element][polarisation] flattened; the LBL inputs take the
      // second half of the LBA dipoles.
      const size_t slot = inputs[rcu] == 'l' ? inputs.size() + rcu : rcu;
      const size_t element = slot / 2;
      if (element >= nrElements)
        throw std::invalid_argument("antenna set " + antennaSet + ": RCU " + std::to_string(rcu) +
                                    " reads element " + std::to_string(element) +
                                    " of a field of " + std::to_string(nrElements));
      rcus[element][slot % 2] = int(rcu);
    }
    return rcus;
  }
  return std::nullopt;
}

}  // namespace rtcp::storage
