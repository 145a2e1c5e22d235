// torchvision's ResNet-18/50/101/152: BasicBlock or Bottleneck (stride on the 3x3 conv, v1.5), in-place
// `out += identity` then in-place ReLU, as torchvision's forward does. ResNeXt-101 32x4d is NVIDIA
// DeepLearningExamples' (PyTorch/Classification/ConvNets/image_classification/models/resnet.py): the same
// bottleneck with 32 groups in the 3x3 conv, widths 128..1024 and expansion 2 (so the block outputs match
// ResNet-50's 256..2048 channels).
#include <vector>

#include "workloads/cnn_models.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

TensorId conv_bn(ModelBuilder& b, TensorId x, int64_t c, int64_t k, int64_t stride, int64_t pad,
                 const std::string& p, const std::string& conv, const std::string& bn) {
  return b.batch_norm(b.conv2d(x, c, k, stride, pad, 1, false, p + conv), p + bn);
}

// The layout of a ResNet: blocks per stage, the first stage's width (doubled per stage), the bottleneck's
// expansion (0: basic blocks) and the 3x3 conv's groups.
struct ResNetArch {
  std::vector<int> blocks;
  int64_t width = 64;
  int64_t expansion = 4;
  int64_t groups = 1;
};

TensorId block(ModelBuilder& b, TensorId x, int64_t in_c, int64_t width, int64_t stride, const ResNetArch& arch,
               const std::string& p) {
  const bool bottleneck = arch.expansion > 0;
  int64_t out_c = bottleneck ? width * arch.expansion : width;
  TensorId y;
  if (bottleneck) {
    y = b.relu(conv_bn(b, x, width, 1, 1, 0, p, "conv1", "bn1"), true, p + "relu1");
    y = b.relu(b.batch_norm(b.conv2d(y, width, 3, stride, 1, arch.groups, false, p + "conv2"), p + "bn2"), true, p + "relu2");
    y = conv_bn(b, y, out_c, 1, 1, 0, p, "conv3", "bn3");
  } else {
    y = b.relu(conv_bn(b, x, width, 3, stride, 1, p, "conv1", "bn1"), true, p + "relu1");
    y = conv_bn(b, y, width, 3, 1, 1, p, "conv2", "bn2");
  }
  // torchvision computes the downsample after the main branch, so it is issued there too.
  TensorId identity = x;
  if (stride != 1 || in_c != out_c) identity = conv_bn(b, x, out_c, 1, stride, 0, p, "downsample.0", "downsample.1");
  y = b.add(y, identity, true, p + "add");
  return b.relu(y, true, p + "relu");
}

Graph resnet(const std::string& name, const ResNetArch& arch, const ModelOptions& opts) {
  ModelBuilder b(name, opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, name);
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = b.relu(b.batch_norm(b.conv2d(x, 64, 7, 2, 3, 1, false, "conv1"), "bn1"), true, "relu");
  x = b.max_pool(x, 3, 2, 1, false, "maxpool");
  int64_t in_c = 64;
  for (int layer = 0; layer < 4; ++layer) {
    int64_t width = arch.width << layer;
    for (int i = 0; i < arch.blocks[static_cast<size_t>(layer)]; ++i) {
      int64_t stride = (layer > 0 && i == 0) ? 2 : 1;
      const std::string path = "layer" + std::to_string(layer + 1) + "." + std::to_string(i);
      b.begin_block(path);  // the basic or bottleneck block: what checkpointing segments
      x = block(b, x, in_c, width, stride, arch, path + ".");
      b.end_block();
      in_c = arch.expansion > 0 ? width * arch.expansion : width;
    }
  }
  x = b.flatten(b.adaptive_avg_pool(x, 1, 1, "avgpool"), "flatten");
  b.cross_entropy_loss(b.linear(x, 1000, true, "fc"));
  return b.finish();
}

}  // namespace

Graph build_resnet18(const ModelOptions& opts) { return resnet("resnet18", {{2, 2, 2, 2}, 64, 0, 1}, opts); }
Graph build_resnet50(const ModelOptions& opts) { return resnet("resnet50", {{3, 4, 6, 3}, 64, 4, 1}, opts); }
Graph build_resnet101(const ModelOptions& opts) { return resnet("resnet101", {{3, 4, 23, 3}, 64, 4, 1}, opts); }
Graph build_resnet152(const ModelOptions& opts) { return resnet("resnet152", {{3, 8, 36, 3}, 64, 4, 1}, opts); }
Graph build_resnext101_32x4d(const ModelOptions& opts) {
  return resnet("resnext101-32x4d", {{3, 4, 23, 3}, 128, 2, 32}, opts);
}

}  // namespace dlsim
