#pragma once
// cuDNN's scratch per convolution pass as measured through PyTorch's caching allocator on a real GPU
// (validate/torch/conv_workspace_probe.py: the bytes a call asked beyond its operands and its result, cuDNN's
// heuristics choosing), read from a hardware file's `conv_scratch:` list and charged to the graph's convolutions.
//
// Unlike `conv_workspace` (hw/measured_workspace.h, keyed by the zoo's op signature), an entry is keyed by the
// convolution's geometry alone (pass, dtype, layout, C, H, W, K, R, S, strides, pads, dilation, groups), so one
// table serves the zoo's graphs and recorded PyTorch steps (workloads/torch_step_graph.h) alike; the batch is
// scaled linearly from the nearest measured one (cuDNN's large scratch buffers are per-image transforms; cuDNN's
// heuristics may choose another algorithm at another batch, which no scaling sees: a file should hold entries at
// the batches it is used at). A file without the list changes nothing.
//
// Passes: fwd, dgrad and wgrad are a call asking one thing (the forward, or convolution_backward asked for one
// gradient); bwd is convolution_backward asked for both gradients in one call, as autograd asks it for every
// convolution whose input requires grad. PyTorch's cuDNN backward then runs the data gradient and the weight
// gradient one after the other, each allocating and freeing its own workspace; a bwd entry is the peak of that
// call beyond both gradients, max(dgrad's workspace - dW's bytes, wgrad's workspace).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "hw/fitted/conv_sizes.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// "fwd f32 nchw c=64 h=224 w=224 k=64 r=3 s=3 stride=1x1 pad=1x1 dilation=1 groups=1"; `pass` is fwd, dgrad,
// wgrad or bwd, `dtype` to_string(DType), `layout` nchw or nhwc.
std::string conv_scratch_key(const std::string& pass, const std::string& dtype, const std::string& layout, int64_t c,
                             int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride_h,
                             int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dilation, int64_t groups);

struct ConvScratchKey {
  std::string key;
  int64_t batch = 0;
  std::string dtype, layout;  // as in the key: to_string(DType), nchw or nhwc
};
// The key and batch of a convolution op (Conv2d, Conv2dBwdData, Conv2dBwdFilter), or nullopt for any other op or
// one whose activation operand is not 4-D; with `pass`, that pass's key of the op's geometry ("bwd": its pair's).
std::optional<ConvScratchKey> conv_scratch_key_of_op(const Graph& g, const Op& op, const char* pass = nullptr);

// Per op: for a Conv2dBwdData or Conv2dBwdFilter op whose convolution has both (one convolution_backward call
// asked for both gradients), the other one's id; else -1. Matched by name, "STEM.bwd_data" with "STEM.bwd_filter",
// as the zoo's synthesis and a recorded step both name them. The first layer (its input needs no gradient) has a
// lone wgrad.
std::vector<OpId> conv_backward_partner(const Graph& g);

// Reads `conv_scratch:` (a list of {pass, dtype, layout, n, c, h, w, k, r, s, stride_h, stride_w, pad_h, pad_w,
// dilation, groups, bytes}) into spec.conv_scratch, and `conv_scratch_neighbours:` (0 to 64) into
// spec.conv_scratch_neighbours; every bad entry is an error naming the file, line and field.
void read_conv_scratch(const YamlMap& top, GpuSpec& spec);

struct ConvScratchCoverage {
  size_t convolutions = 0;  // convolution ops in the graph
  size_t sized = 0;         // given the measured scratch of their geometry (their workspace resized, or one added)
  size_t estimated = 0;     // given its nearest measured geometries', scaled (conv_scratch_nearest)
};

// The entries of `pass` nearest the convolution `z` (whose key is `of`), at most `count`, nearest first, for a
// geometry the file has no entry of: among the entries of the same pass, dtype, layout, filter size, strides,
// dilation, grouping (dense, depthwise, grouped; a grouped convolution takes dense entries when there is no grouped
// one) and channel alignment (16-byte vectors per group, as cuDNN's channels-last kernels load them), by the sum of
// |log2| ratios of input channels, output channels and input pixels (key order on a tie); empty when none is of
// its kind. cuDNN's heuristics choose the algorithm, hence the scratch, from these: the neighbours' choices are
// the best guess a table can give (results/fidelity/memory.md, "Convolutions nobody probed", says how good).
std::vector<const GpuSpec::ConvScratchRecord*> conv_scratch_nearest(const GpuSpec& spec, const std::string& pass,
                                                                   const ConvSizes& z, const ConvScratchKey& of,
                                                                   size_t count);

// `rec`'s bytes at its measured batch nearest `batch` (the larger on a tie), scaled to the convolution `z` at
// `batch`: by the batch for the same geometry, else by the ratio of the two convolutions' input + output + filter
// bytes; rounded up to the allocator's 512 B.
uint64_t conv_scratch_scaled(const GpuSpec::ConvScratchRecord& rec, const ConvSizes& z, int64_t batch);

// Gives each convolution op with an entry of its geometry a workspace tensor of the measured bytes (scaled to its
// batch from the nearest measured batch, rounded up to 512 B): resizes the one it has, or adds one (a recorded
// step's convolutions have none; a measured 0 adds none). An op without any entry of its geometry takes, for each
// pass, the median of its spec.conv_scratch_neighbours (3) nearest geometries' entries, each scaled to it
// (conv_scratch_nearest, conv_scratch_scaled), where that many are of its kind: one or two neighbours of a filter
// size few models have may be an odd algorithm's choice (Inception's 5x5 weight gradient asks 7.5 times its
// operands; scaled to AlexNet's 5x5 layer at batch 128 it was 6.8 times what that layer asks). An op without
// them keeps what it had. No-op when spec.conv_scratch is empty. Which entry serves an op:
// - Conv2d: fwd;
// - a pair's Conv2dBwdFilter: the bwd entry where there is one, else its wgrad entry. It runs second, and dlsim then
//   holds both gradients, so its peak is the measured call's (gradients + the bwd entry) to the byte;
// - a pair's Conv2dBwdData: its dgrad entry, and where the pair has a bwd entry at most that plus dW's bytes (the
//   call's peak bounds it), 0 without a dgrad entry. PyTorch's call asks for the data gradient's workspace first,
//   then the weight gradient's: two requests, whose sizes and order decide which cached segments are reused;
// - a lone Conv2dBwdFilter (the first layer): its wgrad entry, else the bwd entry (at batch 32, the probe's
//   two-gradient call asked of the stems what their weight gradient alone asks: their data gradient asks none);
// - a lone Conv2dBwdData: its dgrad entry.
ConvScratchCoverage apply_conv_scratch(Graph& g, const GpuSpec& spec);

}  // namespace dlsim
