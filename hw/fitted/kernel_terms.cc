#include "hw/fitted/kernel_terms.h"

#include <algorithm>

#include "hw/math_path.h"

namespace dlsim {

KernelTerms kernel_terms(const KernelShape& s, const GpuSpec& spec, const FittedKernels& fitted) {
  KernelTerms t;
  const double peak = path_peak(spec, s.path);
  if (s.flops > 0 && peak > 0) t.flop_us = s.flops / peak * 1e6;
  t.wave = wave_factor(grid_blocks(s.grid, spec.sms, fitted.tile, fitted.min_split_k), spec.sms);
  if (s.bytes > 0 && spec.hbm_bandwidth > 0) t.byte_us = s.bytes / spec.hbm_bandwidth * 1e6;
  if (s.channels > 0) {
    const double per_channel = t.byte_us / s.channels * static_cast<double>(spec.sms);
    (s.backward ? t.channel_bwd_us : t.channel_us) = per_channel;
  }
  if (s.rows > 0) (s.backward ? t.row_bwd_us : t.row_us) = s.rows / static_cast<double>(std::max(spec.sms, 1));
  if (s.window_bytes > 0 && spec.hbm_bandwidth > 0)
    (s.backward ? t.window_bwd_us : t.window_us) = s.window_bytes / spec.hbm_bandwidth * 1e6;
  if ((s.family == KernelFamily::LayerNorm || is_pool_family(s.family)) && s.backward)
    std::swap(t.byte_us, t.byte_bwd_us);
  if (s.idle_blocks > 0) t.input_us = s.idle_blocks / static_cast<double>(std::max(spec.sms, 1));
  if (s.family == KernelFamily::MultiTensor) {
    t.launches = s.launches;
    if (s.chunk_bytes > 0 && spec.hbm_bandwidth > 0)
      t.chunk_us = s.chunk_bytes * static_cast<double>(spec.sms) / spec.hbm_bandwidth * 1e6;
  }
  return t;
}

double class_time_us(const FittedKernelClass& c, const KernelTerms& t) {
  return c.fixed_us * t.launches + c.flop_scale * t.flop_us + c.wave_scale * t.flop_us * t.wave +
         c.byte_scale * t.byte_us + c.channel_scale * t.channel_us + channel_bwd_coefficient(c) * t.channel_bwd_us +
         c.row_scale * t.row_us + row_bwd_coefficient(c) * t.row_bwd_us + byte_bwd_coefficient(c) * t.byte_bwd_us +
         c.window_scale * t.window_us + window_bwd_coefficient(c) * t.window_bwd_us + c.input_scale * t.input_us +
         c.chunk_scale * t.chunk_us;
}

double window_bwd_coefficient(const FittedKernelClass& c) {
  return c.window_bwd_scale > 0 ? c.window_bwd_scale : c.window_scale;
}

double byte_bwd_coefficient(const FittedKernelClass& c) {
  return c.byte_bwd_scale > 0 ? c.byte_bwd_scale : c.byte_scale;
}

double row_bwd_coefficient(const FittedKernelClass& c) { return c.row_bwd_scale > 0 ? c.row_bwd_scale : c.row_scale; }

double channel_bwd_coefficient(const FittedKernelClass& c) {
  return c.channel_bwd_scale > 0 ? c.channel_bwd_scale : c.channel_scale;
}

double device_time_us(const FittedKernels& f, const FittedKernelClass& c, const KernelTerms& t, double device_fixed_us) {
  const double fitted = class_time_us(c, t);
  return f.fixed_includes_dispatch ? fitted + (device_fixed_us - c.fixed_us) * t.launches : fitted;
}

const FittedKernelClass* find_class(const FittedKernels& fitted, const KernelShape& s, std::string* name) {
  for (const std::string& candidate : class_candidates(s)) {
    auto it = fitted.classes.find(candidate);
    if (it == fitted.classes.end()) continue;
    if (name) *name = candidate;
    return &it->second;
  }
  return nullptr;
}

}  // namespace dlsim
