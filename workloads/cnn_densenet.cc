// torchvision's DenseNet-121 (growth 32, blocks 6-12-24-16, bn_size 4, memory_efficient=False): every dense
// layer concatenates all earlier feature maps into a new tensor (torch.cat, even of a single tensor), which
// its first batch norm keeps for backward, so the kept memory grows quadratically with the block's depth.
#include <vector>

#include "workloads/cnn_models.h"
#include "workloads/model_builder.h"

namespace dlsim {

Graph build_densenet121(const ModelOptions& opts) {
  const int64_t growth = 32, bn_size = 4;
  const std::vector<int> blocks = {6, 12, 24, 16};
  ModelBuilder b("densenet121", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 224, "densenet121");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = b.conv2d(x, 64, 7, 2, 3, 1, false, "features.conv0");
  x = b.relu(b.batch_norm(x, "features.norm0"), true, "features.relu0");
  x = b.max_pool(x, 3, 2, 1, false, "features.pool0");
  int64_t channels = 64;
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    std::string bn = "features.denseblock" + std::to_string(bi + 1);
    std::vector<TensorId> features = {x};
    for (int li = 0; li < blocks[bi]; ++li) {
      std::string ln = bn + ".denselayer" + std::to_string(li + 1);
      TensorId cat = b.concat(features, 1, ln + ".cat");
      TensorId y = b.relu(b.batch_norm(cat, ln + ".norm1"), true, ln + ".relu1");
      y = b.conv2d(y, bn_size * growth, 1, 1, 0, 1, false, ln + ".conv1");
      y = b.relu(b.batch_norm(y, ln + ".norm2"), true, ln + ".relu2");
      features.push_back(b.conv2d(y, growth, 3, 1, 1, 1, false, ln + ".conv2"));
    }
    x = b.concat(features, 1, bn + ".cat");
    channels += blocks[bi] * growth;
    if (bi + 1 < blocks.size()) {
      std::string tn = "features.transition" + std::to_string(bi + 1);
      x = b.relu(b.batch_norm(x, tn + ".norm"), true, tn + ".relu");
      channels /= 2;
      x = b.conv2d(x, channels, 1, 1, 0, 1, false, tn + ".conv");
      x = b.avg_pool(x, 2, 2, 0, false, true, tn + ".pool");
    }
  }
  x = b.relu(b.batch_norm(x, "features.norm5"), true, "relu");
  x = b.flatten(b.adaptive_avg_pool(x, 1, 1, "avgpool"), "flatten");
  b.cross_entropy_loss(b.linear(x, 1000, true, "classifier"));
  return b.finish();
}

}  // namespace dlsim
