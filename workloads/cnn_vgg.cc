// torchvision's AlexNet and VGG-16/19 (configurations D and E, no batch norm).
#include <vector>

#include "workloads/cnn_models.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

// The shared classifier head: AdaptiveAvgPool(pool) -> flatten -> [Dropout ->] Linear -> ReLU -> ... -> Linear.
TensorId classifier(ModelBuilder& b, TensorId x, int64_t pool, bool dropout_first) {
  x = b.adaptive_avg_pool(x, pool, pool, "avgpool");
  x = b.flatten(x, "flatten");
  if (dropout_first) {  // AlexNet: Dropout, Linear, ReLU, Dropout, Linear, ReLU, Linear
    x = b.dropout(x, 0.5, "classifier.0");
    x = b.relu(b.linear(x, 4096, true, "classifier.1"), true, "classifier.2");
    x = b.dropout(x, 0.5, "classifier.3");
    x = b.relu(b.linear(x, 4096, true, "classifier.4"), true, "classifier.5");
    return b.linear(x, 1000, true, "classifier.6");
  }
  // VGG: Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear
  x = b.relu(b.linear(x, 4096, true, "classifier.0"), true, "classifier.1");
  x = b.dropout(x, 0.5, "classifier.2");
  x = b.relu(b.linear(x, 4096, true, "classifier.3"), true, "classifier.4");
  x = b.dropout(x, 0.5, "classifier.5");
  return b.linear(x, 1000, true, "classifier.6");
}

Graph vgg(const std::string& name, const std::vector<int>& cfg, const ModelOptions& opts) {
  ModelBuilder b(name, opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, name);
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  int i = 0;
  for (int c : cfg) {
    std::string idx = "features." + std::to_string(i);
    if (c == 0) {
      x = b.max_pool(x, 2, 2, 0, false, idx);
      i += 1;
    } else {
      x = b.conv2d(x, c, 3, 1, 1, 1, true, idx);
      x = b.relu(x, true, "features." + std::to_string(i + 1));
      i += 2;
    }
  }
  b.cross_entropy_loss(classifier(b, x, 7, false));
  return b.finish();
}

}  // namespace

Graph build_alexnet(const ModelOptions& opts) {
  ModelBuilder b("alexnet", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, "alexnet");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = b.relu(b.conv2d(x, 64, 11, 4, 2, 1, true, "features.0"), true, "features.1");
  x = b.max_pool(x, 3, 2, 0, false, "features.2");
  x = b.relu(b.conv2d(x, 192, 5, 1, 2, 1, true, "features.3"), true, "features.4");
  x = b.max_pool(x, 3, 2, 0, false, "features.5");
  x = b.relu(b.conv2d(x, 384, 3, 1, 1, 1, true, "features.6"), true, "features.7");
  x = b.relu(b.conv2d(x, 256, 3, 1, 1, 1, true, "features.8"), true, "features.9");
  x = b.relu(b.conv2d(x, 256, 3, 1, 1, 1, true, "features.10"), true, "features.11");
  x = b.max_pool(x, 3, 2, 0, false, "features.12");
  b.cross_entropy_loss(classifier(b, x, 6, true));
  return b.finish();
}

// 0 marks a max-pool, as in torchvision's cfgs "D" and "E".
Graph build_vgg16(const ModelOptions& opts) {
  return vgg("vgg16", {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}, opts);
}

Graph build_vgg19(const ModelOptions& opts) {
  return vgg("vgg19", {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0}, opts);
}

}  // namespace dlsim
