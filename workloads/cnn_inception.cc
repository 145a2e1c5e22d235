// torchvision's GoogLeNet (aux_logits=False, transform_input=False) and Inception-v3 (aux_logits=False,
// transform_input=False). Both use BasicConv2d = conv (no bias) + batch norm + in-place ReLU.
#include <vector>

#include "workloads/cnn_models.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

TensorId basic(ModelBuilder& b, TensorId x, int64_t c, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,
               int64_t pw, const std::string& n) {
  x = b.conv2d(x, c, kh, kw, sh, sw, ph, pw, 1, false, n + ".conv");
  return b.relu(b.batch_norm(x, n + ".bn"), true, n + ".relu");
}
TensorId basic(ModelBuilder& b, TensorId x, int64_t c, int64_t k, int64_t s, int64_t p, const std::string& n) {
  return basic(b, x, c, k, k, s, s, p, p, n);
}

// GoogLeNet's Inception module; torchvision's "5x5" branch really uses a 3x3 kernel.
TensorId googlenet_inception(ModelBuilder& b, TensorId x, int64_t c1, int64_t c3r, int64_t c3, int64_t c5r, int64_t c5,
                             int64_t pool_proj, const std::string& n) {
  TensorId b1 = basic(b, x, c1, 1, 1, 0, n + ".branch1");
  TensorId b2 = basic(b, basic(b, x, c3r, 1, 1, 0, n + ".branch2.0"), c3, 3, 1, 1, n + ".branch2.1");
  TensorId b3 = basic(b, basic(b, x, c5r, 1, 1, 0, n + ".branch3.0"), c5, 3, 1, 1, n + ".branch3.1");
  TensorId b4 = basic(b, b.max_pool(x, 3, 1, 1, true, n + ".branch4.0"), pool_proj, 1, 1, 0, n + ".branch4.1");
  return b.concat({b1, b2, b3, b4}, 1, n + ".cat");
}

// Inception-v3 blocks A to E (torchvision's InceptionA..InceptionE).
TensorId inc_a(ModelBuilder& b, TensorId x, int64_t pool_features, const std::string& n) {
  TensorId b1 = basic(b, x, 64, 1, 1, 0, n + ".branch1x1");
  TensorId b5 = basic(b, basic(b, x, 48, 1, 1, 0, n + ".branch5x5_1"), 64, 5, 1, 2, n + ".branch5x5_2");
  TensorId b3 = basic(b, x, 64, 1, 1, 0, n + ".branch3x3dbl_1");
  b3 = basic(b, basic(b, b3, 96, 3, 1, 1, n + ".branch3x3dbl_2"), 96, 3, 1, 1, n + ".branch3x3dbl_3");
  TensorId bp = basic(b, b.avg_pool(x, 3, 1, 1, false, true, n + ".avg_pool"), pool_features, 1, 1, 0, n + ".branch_pool");
  return b.concat({b1, b5, b3, bp}, 1, n + ".cat");
}

TensorId inc_b(ModelBuilder& b, TensorId x, const std::string& n) {
  TensorId b3 = basic(b, x, 384, 3, 2, 0, n + ".branch3x3");
  TensorId bd = basic(b, x, 64, 1, 1, 0, n + ".branch3x3dbl_1");
  bd = basic(b, basic(b, bd, 96, 3, 1, 1, n + ".branch3x3dbl_2"), 96, 3, 2, 0, n + ".branch3x3dbl_3");
  TensorId bp = b.max_pool(x, 3, 2, 0, false, n + ".max_pool");
  return b.concat({b3, bd, bp}, 1, n + ".cat");
}

TensorId inc_c(ModelBuilder& b, TensorId x, int64_t c7, const std::string& n) {
  TensorId b1 = basic(b, x, 192, 1, 1, 0, n + ".branch1x1");
  TensorId b7 = basic(b, x, c7, 1, 1, 0, n + ".branch7x7_1");
  b7 = basic(b, b7, c7, 1, 7, 1, 1, 0, 3, n + ".branch7x7_2");
  b7 = basic(b, b7, 192, 7, 1, 1, 1, 3, 0, n + ".branch7x7_3");
  TensorId bd = basic(b, x, c7, 1, 1, 0, n + ".branch7x7dbl_1");
  bd = basic(b, bd, c7, 7, 1, 1, 1, 3, 0, n + ".branch7x7dbl_2");
  bd = basic(b, bd, c7, 1, 7, 1, 1, 0, 3, n + ".branch7x7dbl_3");
  bd = basic(b, bd, c7, 7, 1, 1, 1, 3, 0, n + ".branch7x7dbl_4");
  bd = basic(b, bd, 192, 1, 7, 1, 1, 0, 3, n + ".branch7x7dbl_5");
  TensorId bp = basic(b, b.avg_pool(x, 3, 1, 1, false, true, n + ".avg_pool"), 192, 1, 1, 0, n + ".branch_pool");
  return b.concat({b1, b7, bd, bp}, 1, n + ".cat");
}

TensorId inc_d(ModelBuilder& b, TensorId x, const std::string& n) {
  TensorId b3 = basic(b, basic(b, x, 192, 1, 1, 0, n + ".branch3x3_1"), 320, 3, 2, 0, n + ".branch3x3_2");
  TensorId b7 = basic(b, x, 192, 1, 1, 0, n + ".branch7x7x3_1");
  b7 = basic(b, b7, 192, 1, 7, 1, 1, 0, 3, n + ".branch7x7x3_2");
  b7 = basic(b, b7, 192, 7, 1, 1, 1, 3, 0, n + ".branch7x7x3_3");
  b7 = basic(b, b7, 192, 3, 2, 0, n + ".branch7x7x3_4");
  TensorId bp = b.max_pool(x, 3, 2, 0, false, n + ".max_pool");
  return b.concat({b3, b7, bp}, 1, n + ".cat");
}

TensorId inc_e(ModelBuilder& b, TensorId x, const std::string& n) {
  TensorId b1 = basic(b, x, 320, 1, 1, 0, n + ".branch1x1");
  TensorId b3 = basic(b, x, 384, 1, 1, 0, n + ".branch3x3_1");
  TensorId b3a = basic(b, b3, 384, 1, 3, 1, 1, 0, 1, n + ".branch3x3_2a");
  TensorId b3b = basic(b, b3, 384, 3, 1, 1, 1, 1, 0, n + ".branch3x3_2b");
  TensorId b3c = b.concat({b3a, b3b}, 1, n + ".cat3x3");
  TensorId bd = basic(b, basic(b, x, 448, 1, 1, 0, n + ".branch3x3dbl_1"), 384, 3, 1, 1, n + ".branch3x3dbl_2");
  TensorId bda = basic(b, bd, 384, 1, 3, 1, 1, 0, 1, n + ".branch3x3dbl_3a");
  TensorId bdb = basic(b, bd, 384, 3, 1, 1, 1, 1, 0, n + ".branch3x3dbl_3b");
  TensorId bdc = b.concat({bda, bdb}, 1, n + ".catdbl");
  TensorId bp = basic(b, b.avg_pool(x, 3, 1, 1, false, true, n + ".avg_pool"), 192, 1, 1, 0, n + ".branch_pool");
  return b.concat({b1, b3c, bdc, bp}, 1, n + ".cat");
}

}  // namespace

Graph build_googlenet(const ModelOptions& opts) {
  ModelBuilder b("googlenet", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, "googlenet");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = basic(b, x, 64, 7, 2, 3, "conv1");
  x = b.max_pool(x, 3, 2, 0, true, "maxpool1");
  x = basic(b, x, 64, 1, 1, 0, "conv2");
  x = basic(b, x, 192, 3, 1, 1, "conv3");
  x = b.max_pool(x, 3, 2, 0, true, "maxpool2");
  x = googlenet_inception(b, x, 64, 96, 128, 16, 32, 32, "inception3a");
  x = googlenet_inception(b, x, 128, 128, 192, 32, 96, 64, "inception3b");
  x = b.max_pool(x, 3, 2, 0, true, "maxpool3");
  x = googlenet_inception(b, x, 192, 96, 208, 16, 48, 64, "inception4a");
  x = googlenet_inception(b, x, 160, 112, 224, 24, 64, 64, "inception4b");
  x = googlenet_inception(b, x, 128, 128, 256, 24, 64, 64, "inception4c");
  x = googlenet_inception(b, x, 112, 144, 288, 32, 64, 64, "inception4d");
  x = googlenet_inception(b, x, 256, 160, 320, 32, 128, 128, "inception4e");
  x = b.max_pool(x, 2, 2, 0, true, "maxpool4");
  x = googlenet_inception(b, x, 256, 160, 320, 32, 128, 128, "inception5a");
  x = googlenet_inception(b, x, 384, 192, 384, 48, 128, 128, "inception5b");
  x = b.flatten(b.adaptive_avg_pool(x, 1, 1, "avgpool"), "flatten");
  x = b.dropout(x, 0.2, "dropout");
  b.cross_entropy_loss(b.linear(x, 1000, true, "fc"));
  return b.finish();
}

Graph build_inception_v3(const ModelOptions& opts) {
  ModelBuilder b("inception_v3", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 299, "inception_v3");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = basic(b, x, 32, 3, 2, 0, "Conv2d_1a_3x3");
  x = basic(b, x, 32, 3, 1, 0, "Conv2d_2a_3x3");
  x = basic(b, x, 64, 3, 1, 1, "Conv2d_2b_3x3");
  x = b.max_pool(x, 3, 2, 0, false, "maxpool1");
  x = basic(b, x, 80, 1, 1, 0, "Conv2d_3b_1x1");
  x = basic(b, x, 192, 3, 1, 0, "Conv2d_4a_3x3");
  x = b.max_pool(x, 3, 2, 0, false, "maxpool2");
  x = inc_a(b, x, 32, "Mixed_5b");
  x = inc_a(b, x, 64, "Mixed_5c");
  x = inc_a(b, x, 64, "Mixed_5d");
  x = inc_b(b, x, "Mixed_6a");
  x = inc_c(b, x, 128, "Mixed_6b");
  x = inc_c(b, x, 160, "Mixed_6c");
  x = inc_c(b, x, 160, "Mixed_6d");
  x = inc_c(b, x, 192, "Mixed_6e");
  x = inc_d(b, x, "Mixed_7a");
  x = inc_e(b, x, "Mixed_7b");
  x = inc_e(b, x, "Mixed_7c");
  x = b.adaptive_avg_pool(x, 1, 1, "avgpool");
  x = b.flatten(b.dropout(x, 0.5, "dropout"), "flatten");
  b.cross_entropy_loss(b.linear(x, 1000, true, "fc"));
  return b.finish();
}

}  // namespace dlsim
