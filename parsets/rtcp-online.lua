--[[
 rtcp's online strategy for AOFlagger: the post-correlation flagger's default
 (output/PostCorrelationFlagger.h; Rtcp.Flagging.postCorrelation.strategy names another,
 `lofar-default` AOFlagger's own LOFAR strategy). It is LOFAR's default strategy
 (AOFlagger's lofar-default.lua, the generic "minimal" strategy of 2020-06-14) cut down
 to what flagging 488 subbands of 24 stations in real time on one core affords, measured
 in docs/PERFORMANCE.md §3 ("rtcp's online strategy for AOFlagger"):
  - it flags Stokes I (the (XX + YY) / 2 of whatever polarisations it is given; rtcp gives
    it I alone by default, Rtcp.Flagging.postCorrelation.polarisations) as amplitudes,
    not each polarisation;
  - the cells flagged on input (lost, or flagged before correlation: valid samples 0,
    visibility 0) stay flagged and are not data: every step below works on the unflagged
    cells only (LOFAR's strategy clears the input flags, so the zeros of lost cells enter
    its statistics as data);
  - one background fit (LOFAR's: two), the same low-pass filter on the data downsampled
    by 3 in time and frequency; before it a SumThreshold in frequency alone (broadband
    bursts) at twice the base threshold and the per-channel RMS threshold (narrow-band
    signals) keep the strongest interference out of the fit, after it the final
    SumThreshold in time and frequency at the base threshold runs on the residual; no
    per-integration RMS threshold;
  - the scale-invariant rank operator (dilation) as LOFAR's, with the input flags as
    missing, not as flagged (a lost integration does not grow into its neighbours).
]]--

aoflagger.require_min_version("3.0")

function execute(input)
  local base_threshold = 1.0  -- lower means more sensitive detection
  local first_threshold_factor = 2.0  -- of the SumThreshold before the background fit

  -- Stokes I amplitudes, with the input flags as its mask.
  local data = input:convert_to_polarization("I"):convert_to_complex("amplitude")
  local original = data:copy()

  -- The strongest interference out of the background fit: SumThreshold in frequency
  -- (broadband bursts), and channels whose RMS over the window stands out (narrow-band
  -- signals).
  aoflagger.sumthreshold(data, first_threshold_factor * base_threshold,
                         first_threshold_factor * base_threshold, false, true)
  aoflagger.threshold_channel_rms(data, 3.0 * first_threshold_factor, true)

  -- The background: a Gaussian low-pass of the unflagged cells, downsampled by 3 in
  -- time and frequency and back; the residual keeps the flags found so far.
  data:set_visibilities(original)
  local resized = aoflagger.downsample(data, 3, 3, true)
  aoflagger.low_pass_filter(resized, 21, 31, 2.5, 5.0)
  aoflagger.upsample(resized, data, 3, 3)
  local residual = original - data
  residual:set_mask(data)

  aoflagger.sumthreshold(residual, base_threshold, base_threshold, true, true)
  aoflagger.scale_invariant_rank_operator_masked(residual, original, 0.2, 0.2)

  input:join_mask(residual)
end
