// torchvision's MobileNet-V2 (width 1.0) and SqueezeNet 1.1.
#include <vector>

#include "workloads/cnn_models.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

// Conv2dNormActivation: conv (no bias) + batch norm + in-place ReLU6.
TensorId conv_bn_relu6(ModelBuilder& b, TensorId x, int64_t c, int64_t k, int64_t stride, int64_t groups, const std::string& n) {
  x = b.conv2d(x, c, k, stride, (k - 1) / 2, groups, false, n + ".0");
  return b.relu6(b.batch_norm(x, n + ".1"), true, n + ".2");
}

TensorId fire(ModelBuilder& b, TensorId x, int64_t squeeze, int64_t e1, int64_t e3, const std::string& n) {
  x = b.relu(b.conv2d(x, squeeze, 1, 1, 0, 1, true, n + ".squeeze"), true, n + ".squeeze_activation");
  TensorId a = b.relu(b.conv2d(x, e1, 1, 1, 0, 1, true, n + ".expand1x1"), true, n + ".expand1x1_activation");
  TensorId c = b.relu(b.conv2d(x, e3, 3, 1, 1, 1, true, n + ".expand3x3"), true, n + ".expand3x3_activation");
  return b.concat({a, c}, 1, n + ".cat");
}

}  // namespace

Graph build_mobilenet_v2(const ModelOptions& opts) {
  struct Stage { int64_t t, c, n, s; };
  const std::vector<Stage> stages = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                     {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  ModelBuilder b("mobilenet_v2", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, "mobilenet_v2");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = conv_bn_relu6(b, x, 32, 3, 2, 1, "features.0");
  int64_t in_c = 32;
  int f = 1;
  for (const Stage& st : stages) {
    for (int64_t i = 0; i < st.n; ++i, ++f) {
      std::string n = "features." + std::to_string(f) + ".conv";
      int64_t stride = i == 0 ? st.s : 1, hidden = in_c * st.t;
      TensorId y = x;
      int layer = 0;
      if (st.t != 1) y = conv_bn_relu6(b, y, hidden, 1, 1, 1, n + "." + std::to_string(layer++));
      y = conv_bn_relu6(b, y, hidden, 3, stride, hidden, n + "." + std::to_string(layer++));
      y = b.conv2d(y, st.c, 1, 1, 0, 1, false, n + "." + std::to_string(layer++));
      y = b.batch_norm(y, n + "." + std::to_string(layer));
      // `x + self.conv(x)`: an out-of-place add, a new tensor.
      x = (stride == 1 && in_c == st.c) ? b.add(x, y, false, "features." + std::to_string(f) + ".add") : y;
      in_c = st.c;
    }
  }
  x = conv_bn_relu6(b, x, 1280, 1, 1, 1, "features." + std::to_string(f));
  x = b.flatten(b.adaptive_avg_pool(x, 1, 1, "avgpool"), "flatten");
  x = b.dropout(x, 0.2, "classifier.0");
  b.cross_entropy_loss(b.linear(x, 1000, true, "classifier.1"));
  return b.finish();
}

Graph build_squeezenet1_1(const ModelOptions& opts) {
  ModelBuilder b("squeezenet1_1", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, "squeezenet1_1");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = b.relu(b.conv2d(x, 64, 3, 2, 0, 1, true, "features.0"), true, "features.1");
  x = b.max_pool(x, 3, 2, 0, true, "features.2");
  x = fire(b, x, 16, 64, 64, "features.3");
  x = fire(b, x, 16, 64, 64, "features.4");
  x = b.max_pool(x, 3, 2, 0, true, "features.5");
  x = fire(b, x, 32, 128, 128, "features.6");
  x = fire(b, x, 32, 128, 128, "features.7");
  x = b.max_pool(x, 3, 2, 0, true, "features.8");
  x = fire(b, x, 48, 192, 192, "features.9");
  x = fire(b, x, 48, 192, 192, "features.10");
  x = fire(b, x, 64, 256, 256, "features.11");
  x = fire(b, x, 64, 256, 256, "features.12");
  x = b.dropout(x, 0.5, "classifier.0");
  x = b.relu(b.conv2d(x, 1000, 1, 1, 0, 1, true, "classifier.1"), true, "classifier.2");
  x = b.flatten(b.adaptive_avg_pool(x, 1, 1, "classifier.3"), "flatten");
  b.cross_entropy_loss(x);
  return b.finish();
}

}  // namespace dlsim
