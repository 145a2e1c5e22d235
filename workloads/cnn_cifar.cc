// The CIFAR-10 networks of Apache SINGA's examples used by the memory-management paper (batch 100 there):
// see /work/shared/reference/singa-memory-management.md section 6.2. Layer order, sizes and SINGA's defaults
// (convolutions and dense layers with bias) follow SINGA's example scripts; the layers themselves are built
// with PyTorch's semantics (in-place ReLU, autograd's saved tensors), like every other zoo model, so that the
// same training-graph rules and the same PyTorch reference (validate/torch/torch_reference_cnn.py) apply.
#include <vector>

#include "workloads/cnn_models.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

// Local response normalisation across `size` channels (SINGA's LRN, cuDNN's cross-channel LRN). ModelBuilder
// has no LRN, so it is an Other op of sub-kind Lrn; its backward (cudnnLRNCrossChannelBackward) reads the input and
// the output, which is what the training synthesis keeps for an Other op.
TensorId lrn(ModelBuilder& b, TensorId x, int64_t size, const std::string& name) {
  Graph& g = b.graph();
  Tensor t = g.tensor(x);
  t.name = name + ".out";
  TensorId y = g.add_tensor(t);
  Op o;
  o.name = name;
  o.kind = OpKind::Other;
  o.other = OtherOp::Lrn;
  o.inputs = {x};
  o.outputs = {y};
  o.bytes_read = g.tensor(x).bytes;
  o.bytes_written = g.tensor(y).bytes;
  int64_t n = 1;
  for (int64_t d : g.tensor(x).shape) n *= d;
  o.flops = static_cast<double>(n * (2 * size + 4));  // a window sum of squares, a power and a divide
  o.set_attr(Attr::lrn_size, size);
  g.add_op(o);
  return y;
}

TensorId conv_bn_relu(ModelBuilder& b, TensorId x, int64_t c, const std::string& n) {
  x = b.conv2d(x, c, 3, 1, 1, 1, true, n + ".conv");
  return b.relu(b.batch_norm(x, n + ".bn"), true, n + ".relu");
}

}  // namespace

// conv 32@5x5 -> maxpool 3/2 -> relu -> LRN -> conv 32@5x5 -> relu -> avgpool 3/2 -> LRN -> conv 64@5x5 ->
// relu -> avgpool 3/2 -> dense 10 (pooling padded by 1, so 32 -> 16 -> 8 -> 4, as cuda-convnet's layers-18pct).
Graph build_cifar_alexnet(const ModelOptions& opts) {
  ModelBuilder b("cifar-alexnet", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 32, "cifar-alexnet");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = b.conv2d(x, 32, 5, 1, 2, 1, true, "conv1");
  x = b.relu(b.max_pool(x, 3, 2, 1, false, "pool1"), true, "relu1");
  x = lrn(b, x, 3, "lrn1");
  x = b.relu(b.conv2d(x, 32, 5, 1, 2, 1, true, "conv2"), true, "relu2");
  x = lrn(b, b.avg_pool(x, 3, 2, 1, false, true, "pool2"), 3, "lrn2");
  x = b.relu(b.conv2d(x, 64, 5, 1, 2, 1, true, "conv3"), true, "relu3");
  x = b.flatten(b.avg_pool(x, 3, 2, 1, false, true, "pool3"), "flat");
  b.cross_entropy_loss(b.linear(x, 10, true, "dense"));
  return b.finish();
}

// 13 conv-BN-ReLU layers with dropout 0.3 / 0.4 between them, five 2x2 max-pools, then dropout 0.5, dense 512,
// BN, ReLU, dropout 0.5, dense 10 (SINGA's vgg.py, a port of cifar.torch's vgg_bn_drop).
Graph build_cifar_vgg16(const ModelOptions& opts) {
  ModelBuilder b("cifar-vgg16", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 32, "cifar-vgg16");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  const std::vector<std::vector<int64_t>> stages = {{64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  for (size_t si = 0; si < stages.size(); ++si) {
    for (size_t li = 0; li < stages[si].size(); ++li) {
      std::string n = "conv" + std::to_string(si + 1) + "_" + std::to_string(li + 1);
      x = conv_bn_relu(b, x, stages[si][li], n);
      if (li + 1 < stages[si].size()) x = b.dropout(x, si == 0 ? 0.3 : 0.4, n + ".drop");
    }
    x = b.max_pool(x, 2, 2, 0, false, "pool" + std::to_string(si + 1));
  }
  x = b.dropout(b.flatten(x, "flat"), 0.5, "drop_flat");
  x = b.relu(b.batch_norm(b.linear(x, 512, true, "ip1"), "bn_ip1"), true, "relu_ip1");
  x = b.dropout(x, 0.5, "drop_ip2");
  b.cross_entropy_loss(b.linear(x, 10, true, "ip2"));
  return b.finish();
}

// conv 16@3x3-BN-ReLU, three stages of three basic blocks (16, 32, 64 filters; the first block of stages 2
// and 3 has stride 2 and a 1x1 conv + BN projection shortcut), 8x8 average pool, dense 10.
Graph build_cifar_resnet20(const ModelOptions& opts) {
  ModelBuilder b("cifar-resnet20", opts.batch, build_options(opts.training));
  int64_t s = image_size_or(opts, 32, "cifar-resnet20");
  TensorId x = b.input({opts.batch, 3, s, s}, DType::F32);
  x = b.relu(b.batch_norm(b.conv2d(x, 16, 3, 1, 1, 1, true, "conv1"), "bn1"), true, "relu1");
  const std::vector<int64_t> widths = {16, 32, 64};
  for (size_t st = 0; st < widths.size(); ++st) {
    for (int i = 0; i < 3; ++i) {
      std::string n = std::to_string(st + 2) + static_cast<char>('a' + i);
      int64_t stride = (st > 0 && i == 0) ? 2 : 1;
      b.begin_block(n);  // a basic block: what checkpointing segments
      TensorId y = b.relu(b.batch_norm(b.conv2d(x, widths[st], 3, stride, 1, 1, true, n + ".br1.conv1"), n + ".br1.bn1"), true, n + ".br1.relu");
      y = b.batch_norm(b.conv2d(y, widths[st], 3, 1, 1, 1, true, n + ".br1.conv2"), n + ".br1.bn2");
      TensorId shortcut = x;
      if (stride != 1) shortcut = b.batch_norm(b.conv2d(x, widths[st], 1, stride, 0, 1, true, n + ".br2.conv"), n + ".br2.bn");
      x = b.relu(b.add(y, shortcut, true, n + ".merge"), true, n + ".relu");
      b.end_block();
    }
  }
  x = b.flatten(b.avg_pool(x, 8, 8, 0, false, true, "pool4"), "flat");
  b.cross_entropy_loss(b.linear(x, 10, true, "ip5"));
  return b.finish();
}

}  // namespace dlsim
