#pragma once
// What the fitted kernel model (hw/fitted/fitted_kernels.h) knows of one kernel: the family of library kernel it
// is (a cuDNN convolution pass, a cuBLAS GEMM, PyTorch's flash attention, a memory-bound kernel), its math path or
// data type, and the three quantities its time is built from: FLOPs, bytes, and the thread blocks of its grid.
// The same description comes from a sweep record (validate/calibrate/kernel_fit/) and from a simulated op
// (hw/fitted/op_kernel_shapes.h), so that a fit and the simulator price a kernel alike.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

enum class KernelFamily : uint8_t {
  ConvFwd, ConvDgrad, ConvWgrad,     // cuDNN's forward, backward-data and backward-filter convolutions
  Gemm, Bmm,                         // a matrix product, and a batched one (a broadcast batch count above 1)
  // scaled dot-product attention, forward and backward: PyTorch's flash kernels (16-bit) or its memory-efficient
  // ones (fp32: the TF32 path, hw/fitted/op_kernel_shapes.h's sdpa_path)
  SdpaFwd, SdpaBwd,
  Elementwise, Reduction, LayerNorm, BatchNorm,  // memory-bound: add/relu/copy, softmax, layer/RMS norm, batch norm
  // PyTorch's windowed max and average pooling kernels (max_pool_forward_nchw, avg_pool2d_out_cuda_frame and their
  // backwards), memory-bound but priced by their windows' reads as well as their bytes (KernelShape::window_bytes)
  MaxPool, AvgPool,
  // memory-bound: PyTorch's concatenation of two or more tensors (CatArrayBatchedCopy), priced by its bytes and its
  // grid's rows, one per input (KernelShape::inputs); a class fitted without one prices it as elementwise
  Concat,
  // memory-bound: PyTorch's multi_tensor_apply kernels, the launches of a torch._foreach_* op (the optimizer's
  // foreach passes; workloads/multi_tensor_apply.h, hw/fitted/multi_tensor.h)
  MultiTensor,
};
const char* to_string(KernelFamily f);  // "conv_fwd", "bmm", "sdpa_bwd", "layernorm", ...
bool is_memory_family(KernelFamily f);   // priced by bytes (and a pool by its windows' reads), no flops
bool is_pool_family(KernelFamily f);     // MaxPool or AvgPool

// How a convolution's filter is laid out, and which library runs it (hw/fitted/conv_backend.h): a 1x1 filter is a
// plain GEMM in cuDNN, a larger one an implicit GEMM, a grouped one cuDNN's grouped kernels; a depthwise one
// (groups = input channels) PyTorch's own memory-bound kernels (Depthwise) or, channels_last or fp16 of the shapes
// PyTorch picks, cuDNN's depthwise kernels (CudnnDepthwise), or cuDNN's general grouped kernels where it has no
// depthwise one for the pass (CudnnDepthwiseGrouped: fp32 weight gradients of filters above 5x5), which are much
// slower per flop. An ungrouped convolution of fewer than 8 input channels (a network's first layer on RGB images)
// is a kind of its own (FewChannels, of any filter): below one tensor-core step of channels cuDNN pads them and runs
// kernels made for it, many times slower per flop than a layer of many channels (on the H200, AlexNet's 11x11 first
// layer in cutlass's `s1688fprop_optimized_tf32_..._align4` after a transpose that pads the image's 3 channels to 4,
// 16 TFLOP/s in all; ResNet's 7x7 one in an `aligna4_alignc8` kernel; 3x3 ones in CUDA-core `nchwkcrs` kernels and
// their weight gradients in `wgrad_alg0_engine`). An ungrouped fp32 NCHW convolution whose input or output plane
// (H x W) is not a multiple of 4 elements (16 bytes: 35x35, 17x17, 55x55, 13x13, 7x7) is another kind
// (OneByOneUnaligned, SpatialUnaligned): cuDNN's tensor-core kernels read the plane in 16-byte vectors, and for such a
// plane it picks others. In the H200 traces of twenty CNNs the backward passes of 96 of 179 such layers run
// `align1` GEMMs, FFT convolutions or the CUDA-core `wgrad_alg0_engine`, against 2 of 330 layers of aligned planes
// (the forward passes: 38 of 179 against 9 of 330); Inception-v3's 1x1 backward at 35x35 takes three times the
// 1x1 class's time.
enum class ConvVariant : uint8_t {
  None, OneByOne, Spatial, Depthwise, Grouped, CudnnDepthwise, CudnnDepthwiseGrouped, FewChannels, OneByOneUnaligned,
  SpatialUnaligned
};
// "", "1x1", "spatial", "depthwise", "grouped", "cudnn_depthwise", "cudnn_depthwise_grouped", "few_channels",
// "1x1_unaligned", "spatial_unaligned"
const char* to_string(ConvVariant v);

// The kernel's grid as tiles of its output: `batch` independent products of rows x cols outputs, each tiled by
// tile x tile blocks, the reduction split (split-K) only as far as needed to give every SM a block. batch = 0:
// no tiled grid (a memory-bound kernel), no wave term.
struct TileGrid {
  double batch = 0;
  double rows = 0;
  double cols = 0;
  double reduction = 0;  // 0: never split
};

struct KernelShape {
  KernelFamily family = KernelFamily::Elementwise;
  MathPath path = MathPath::CudaCore;  // compute families: the arithmetic units
  DType dtype = DType::F32;            // memory families: the element type
  ConvVariant variant = ConvVariant::None;
  bool filter_1x1 = false;  // a convolution's filter is 1x1 (a grouped one falls back to the 1x1 class then)
  double flops = 0;
  double bytes = 0;  // read and written once
  // Batch norm: the channels it normalises. cuDNN's NCHW batch norm reduces each channel's statistics within one
  // thread block, so a layer of few channels over large images runs on few SMs (ResNet-50's 256 channels reach
  // about 550 GB/s in backward on the H200, MobileNet-V2's 32 about 95). 0: not a batch norm, or unknown.
  double channels = 0;
  // Batch norm and layer norm: the backward kernel. cuDNN's backward block per channel makes two passes (the sums of dy and of
  // dy * x-hat, then dx) over two tensors where the forward's makes one reduction pass over one, so a channel's
  // block takes longer per byte of the op: on the H200's traces 1.1 ms for a 64x16x112x112 layer's backward against
  // 0.43 ms forward (the op's bytes: 1.5 times). The fit gives it its own per-channel coefficient.
  bool backward = false;
  // Layer norm: the rows it normalises. PyTorch's layer norm kernels (vectorized_layer_norm_kernel forward,
  // layer_norm_grad_input_kernel backward) run one thread block per row, so a layer of many narrow rows costs by
  // its rows, not its bytes: on the H200's traces ConvNeXt-T's 100,352 rows of 96 take 158 µs forward where ViT-B/16's
  // 6,304 rows of 768, as many bytes, take 19. 0: not a layer norm (RMS norm: its own kernels), or unknown. Its
  // backward kernels (KernelShape::backward) have their own per-row coefficient.
  double rows = 0;
  // A windowed pool (MaxPool, AvgPool): the bytes its windows read, the pooled output's elements times the window's
  // area times the element's bytes. The kernels loop over the window for each output (forward) or over the
  // windows that cover each input (backward), so a 3x3 window of stride 1 costs more than its bytes say: on the
  // H200's traces GoogLeNet's 3x3 stride-1 max pools run at 1.0 TB/s of their bytes, VGG's 2x2 stride-2 ones at
  // 2.0. Its backward kernels (KernelShape::backward) have their own coefficients. 0: not a windowed pool.
  double window_bytes = 0;
  // Concatenation (KernelFamily::Concat): the tensors this launch copies, the thread blocks of its grid's row for
  // each, and of those the blocks with no data. PyTorch's CatArrayBatchedCopy (aten/src/ATen/native/cuda/Shape.cu)
  // runs grid.y = one row per input, each row as many blocks as the largest input needs (128 threads of 16 bytes
  // each, at most 32 blocks per SM), the blocks past a smaller input's end exiting at once: a cat of DenseNet's 30
  // earlier features schedules 30 rows of blocks, mostly idle, and takes about twice its bytes' time on the H200's
  // traces (results/fidelity/membound-kernels.md). The idle blocks are what the bytes do not price. 0: not a
  // concatenation.
  double inputs = 0;
  double input_blocks = 0;
  double idle_blocks = 0;
  // A multi-tensor kernel (KernelFamily::MultiTensor): the launches the shape stands for, and the sum over them of
  // each launch's largest chunk's bytes (its elements times the bytes an element moves over every list). Each
  // chunk is one thread block, so a launch lasts at least as long as its largest chunk on one SM: on the H200's
  // traces a launch of 48 tensors of a few hundred elements takes 2-3 µs, one of 48 full chunks 17
  // (results/fidelity/membound-kernels.md). The shape's bytes are all its launches' bytes. Other families: one
  // kernel (launches 1), no chunks.
  double launches = 1;
  double chunk_bytes = 0;
  TileGrid grid;
};

// Thread blocks of the grid: batch * ceil(rows / tile) * ceil(cols / tile) tiles, times the split-K slices
// (at least min_split_k of the reduction each) needed to give each of `sms` SMs one. 0 when the grid is empty.
double grid_blocks(const TileGrid& g, int sms, double tile, double min_split_k);
// Wave quantisation: the blocks run in ceil(blocks / sms) waves of equal length, so the kernel takes as long as
// ceil(blocks / sms) * sms blocks would: this factor (>= 1) over its ideal time. 1 when blocks is 0.
double wave_factor(double blocks, int sms);

// The fitted class names that may price the shape, best first: "conv_fwd.tf32.spatial"; a grouped convolution
// then its 1x1/spatial class; a depthwise one of either library then the other library's depthwise class (what
// priced it before the two were told apart, so that a file fitted without the split keeps its times), cuDNN's
// grouped fallback for a depthwise shape first cuDNN's depthwise class (the same reason); a batched
// product then the plain one; a 16-bit kernel then the other 16-bit type's class (bf16 and fp16 tensor cores
// have the same rate). Memory families: "<family>.<dtype>"; a windowed pool then "reduction.<dtype>" and a
// concatenation then "elementwise.<dtype>" (what priced them before they had classes of their own, so that a file
// fitted without them keeps its times).
std::vector<std::string> class_candidates(const KernelShape& s);
// Whether `name` is a class name of that grammar; `why` says what is wrong when not.
bool is_kernel_class_name(const std::string& name, std::string& why);

}  // namespace dlsim
