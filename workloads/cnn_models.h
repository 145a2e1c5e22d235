#pragma once
// The CNN builders of the zoo: torchvision's ImageNet models (module names as torchvision spells them) and
// the CIFAR-10 networks of Apache SINGA's memory-management examples. Each returns a forward graph ending in
// a cross-entropy loss; opts.image_size 0 means the model's default input size.
#include "workloads/graph.h"
#include "workloads/model_options.h"

namespace dlsim {

Graph build_alexnet(const ModelOptions& opts);
Graph build_vgg16(const ModelOptions& opts);
Graph build_vgg19(const ModelOptions& opts);
Graph build_resnet18(const ModelOptions& opts);
Graph build_resnet50(const ModelOptions& opts);
Graph build_resnet101(const ModelOptions& opts);
Graph build_resnet152(const ModelOptions& opts);
Graph build_resnext101_32x4d(const ModelOptions& opts);
Graph build_googlenet(const ModelOptions& opts);
Graph build_inception_v3(const ModelOptions& opts);
Graph build_densenet121(const ModelOptions& opts);
Graph build_mobilenet_v2(const ModelOptions& opts);
Graph build_squeezenet1_1(const ModelOptions& opts);
Graph build_cifar_alexnet(const ModelOptions& opts);
Graph build_cifar_vgg16(const ModelOptions& opts);
Graph build_cifar_resnet20(const ModelOptions& opts);

}  // namespace dlsim
