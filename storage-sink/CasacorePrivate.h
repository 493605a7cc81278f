#pragma once
/// \file CasacorePrivate.h
/// Reaching casacore members that it keeps private but that rtcp needs (TiledColumnFile,
/// MeasurementSetWriter): a pointer to the member is taken in an explicit instantiation,
/// where access is not checked (C++20 [temp.spec.general]/6). Debian's casacore is fixed
/// (3.5); the tests that use these paths compare their result with casacore's own.
///
///   struct TableBase { using Type = casacore::BaseTable* (casacore::Table::*)() const;
///                      friend Type memberOf(TableBase); };
///   template struct rtcp::storage::Reach<TableBase, &casacore::Table::baseTablePtr>;
///   (table.*memberOf(TableBase{}))()->doNotWrite();

namespace rtcp::storage {

/// Tag names the member (a struct with `using Type = <pointer to member>` and a friend
/// declaration `friend Type memberOf(Tag);`); instantiating Reach<Tag, &Class::member>
/// defines that friend.
template <typename Tag, typename Tag::Type Member>
struct Reach {
  friend typename Tag::Type memberOf(Tag) { return Member; }
};

}  // namespace rtcp::storage
