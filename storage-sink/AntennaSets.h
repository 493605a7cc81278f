#pragma once
/// \file AntennaSets.h
/// LOFAR's antenna sets: which receiver unit (RCU) takes which element and polarisation
/// of a station's antenna field, by station type. Made from LOFAR's AntennaSets.conf
/// (MAC/Deployment/data/StaticMetaData), whose selectors say per RCU which input it uses:
/// `h` the LBA inner dipoles (LBH input), `l` the outer ones (LBL), `H` the HBA tiles, `.`
/// none. RCU r reads element r/2 (LBL: 48 + r/2 on 96-RCU stations), polarisation r%2 (X,
/// Y) - the numbering of the shipped element table. So LBA_INNER uses dipoles 0-45 of core
/// and remote stations, LBA_OUTER 48-95, international stations all 96; HBA_ZERO the core
/// stations' tiles 0-23 (HBA0), HBA_ONE 24-47 (HBA1); the *_INNER HBA sets 24 inner tiles
/// of remote stations.

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace rtcp::storage {

enum class StationType { Core, Remote, International };

/// CS... core, RS... remote, any other name international (LOFAR's rule).
StationType stationType(const std::string& station);

/// rcu[element][X, Y]: the RCU that receives each element polarisation, -1 for none.
using ElementRcus = std::vector<std::array<int, 2>>;

/// The antenna set that selects the elements of a field row: HBA_ZERO for an HBA0 row,
/// HBA_ONE for an HBA1 row (whatever the observation's set), else the observation's.
std::string antennaSetOfField(const std::string& antennaSet, const std::string& fieldName);

/// The RCUs of a field of nrElements elements (LBA 96; HBA 48, international 96) when the
/// set is in use; nullopt for an antenna set LOFAR does not define. Throws
/// std::invalid_argument when the set names an element beyond nrElements.
std::optional<ElementRcus> elementRcus(const std::string& antennaSet, StationType type,
                                       size_t nrElements);

}  // namespace rtcp::storage
