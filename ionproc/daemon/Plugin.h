#pragma once
/// \file Plugin.h
/// The interface between ionproc and its plug-ins (ZOID style): ionproc owns the link and
/// the request loop; a plug-in is a shared object exporting
///
///   RTCP_PLUGIN(context) { context.functions.serve(someForwardedFunction, implementation); }
///
/// which registers the forwarded functions compute ranks may call, using the services the
/// context offers (any may be null when ionproc runs without them).

#include <complex>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "BlockSource.h"
#include "VisibilitySink.h"
#include "daemon/FunctionRegistry.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {

struct PluginContext {
  FunctionRegistry& functions;
  const ObservationSettings* settings = nullptr;
  BlockSource* blocks = nullptr;
  VisibilitySink* visibilities = nullptr;
  /// Lines for ionproc's final summary, asked for at the end.
  std::vector<std::function<std::string()>>* summaries = nullptr;
  /// How long a block lent in shared memory waits for a free slot before the call fails.
  double leaseWaitSeconds = 30;
};

/// Name of the entry point every plug-in exports.
constexpr const char* kPluginEntryPoint = "rtcp_plugin_register";
using PluginEntryPoint = void (*)(PluginContext&);

}  // namespace rtcp::ion

/// Defines a plug-in's entry point.
#define RTCP_PLUGIN(context)                                                   \
  extern "C" __attribute__((visibility("default"))) void rtcp_plugin_register( \
      ::rtcp::ion::PluginContext& context)
