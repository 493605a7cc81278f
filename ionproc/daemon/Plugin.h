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
#include "daemon/FunctionRegistry.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {

/// Where correlated blocks go (the Integrator).
class VisibilitySink {
 public:
  virtual ~VisibilitySink() = default;
  /// One block's visibilities[baseline][channel][pol] and validSamples[baseline][channel]
  /// of the subband with index `subbandIndex` in the subband list. Thread-safe; throws
  /// std::invalid_argument for a wrong shape or a block out of range.
  virtual void add(int subbandIndex, int64_t block, int nrStations, int nrChannels,
                   std::span<const std::complex<float>> visibilities,
                   std::span<const uint32_t> validSamples) = 0;
};

struct PluginContext {
  FunctionRegistry& functions;
  const ObservationSettings* settings = nullptr;
  BlockSource* blocks = nullptr;
  VisibilitySink* visibilities = nullptr;
  /// Lines for ionproc's final summary, asked for at the end.
  std::vector<std::function<std::string()>>* summaries = nullptr;
};

/// Name of the entry point every plug-in exports.
constexpr const char* kPluginEntryPoint = "rtcp_plugin_register";
using PluginEntryPoint = void (*)(PluginContext&);

}  // namespace rtcp::ion

/// Defines a plug-in's entry point.
#define RTCP_PLUGIN(context) \
  extern "C" __attribute__((visibility("default"))) void rtcp_plugin_register(::rtcp::ion::PluginContext& context)
