#include "ObservationSummary.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

namespace rtcp::nightly {
namespace {

using boost::property_tree::ptree;

/// The elements of a JSON array of strings (absent: empty).
std::vector<std::string> strings(const ptree& tree, const std::string& key) {
  std::vector<std::string> values;
  if (const auto array = tree.get_child_optional(key))
    for (const auto& [name, element] : *array) values.push_back(element.data());
  return values;
}

/// A number that observe may write as an integer, a float or null.
template <typename T>
T number(const ptree& tree, const std::string& key) {
  const auto text = tree.get_optional<std::string>(key);
  if (!text || text->empty() || *text == "null") return T{};
  return T(std::stod(*text));
}

}  // namespace

ObservationSummary ObservationSummary::fromFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(path + ": cannot open");
  std::ostringstream text;
  text << file.rdbuf();
  return fromJson(text.str(), path);
}

ObservationSummary ObservationSummary::fromJson(const std::string& text,
                                                const std::string& name) {
  ptree tree;
  try {
    std::istringstream in(text);
    boost::property_tree::read_json(in, tree);
  } catch (const boost::property_tree::json_parser_error& e) {
    throw std::runtime_error(name + ":" + std::to_string(e.line()) + ": " + e.message());
  }
  ObservationSummary s;
  try {
    s.observationId = tree.get<std::string>("observationId", "");
    s.status = tree.get<std::string>("status", "");
    s.reason = tree.get<std::string>("reason", "");
    s.start = tree.get<std::string>("start", "");
    s.stop = tree.get<std::string>("stop", "");
    s.durationSeconds = number<double>(tree, "durationSeconds");
    s.realTimeFactor = number<double>(tree, "realTimeFactor");
    s.bytesWritten = number<uint64_t>(tree, "bytesWritten");
    s.blocksDropped = number<uint64_t>(tree, "blocksDropped");
    s.integrationsDropped = number<uint64_t>(tree, "integrationsDropped");
    s.measurementSets = strings(tree, "measurementSets");
    s.plots = strings(tree, "plots");
    if (const auto stations = tree.get_child_optional("stations"))
      for (const auto& [unused, st] : *stations)
        s.stations.push_back({st.get<std::string>("name", "?"),
                              number<uint64_t>(st, "packetsReceived"),
                              number<uint64_t>(st, "packetsExpected"),
                              number<uint64_t>(st, "packetsLost"),
                              number<double>(st, "lossFraction")});
    if (const auto codes = tree.get_child_optional("exitCodes"))
      for (const auto& [part, code] : *codes)
        s.exitCodes[part] = code.data().empty() || code.data() == "null" ? 0 : std::stoi(code.data());
  } catch (const std::exception& e) {
    throw std::runtime_error(name + ": unexpected contents: " + e.what());
  }
  if (s.status != "ok" && s.status != "failed")
    throw std::runtime_error(name + ": status '" + s.status + "' is neither ok nor failed");
  return s;
}

}  // namespace rtcp::nightly
