#include "poolspec/network_layers.hpp"

namespace poolspec {

namespace {

constexpr std::string_view resnet50 = "ResNet-50";
constexpr std::string_view v3 = "GoogLeNet v3 (Inception v3 at 299x299)";
constexpr std::string_view v1 = "GoogLeNet (Inception v1)";
constexpr std::string_view unet3d = "3-D U-Net, encoder";
constexpr std::string_view yolo_spp13 = "YOLOv3-SPP at 416x416, spatial pyramid pooling";
constexpr std::string_view yolo_spp20 = "YOLOv5 (large) at 640x640, spatial pyramid pooling";

constexpr NetworkLayer layers[] = {
    {"resnet50_pool1", resnet50, "max:f32:n1c64:h112w112:k3x3:s2x2:pb1x1:pe1x1:floor"},
    {"resnet50_pool5", resnet50, "avg:f32:n1c2048:h7w7:k7x7:s1x1:pb0x0:pe0x0:exclude:floor"},
    // The stem's max pools, the blocks' 3x3 average pools (padding excluded), the grid
    // reductions' max pools and the final global average.
    {"v3_stem_max1", v3, "max:f32:n1c64:h147w147:k3x3:s2x2:pb0x0:pe0x0:floor", true},
    {"v3_stem_max2", v3, "max:f32:n1c192:h71w71:k3x3:s2x2:pb0x0:pe0x0:floor", true},
    {"v3_block_avg35", v3, "avg:f32:n1c256:h35w35:k3x3:s1x1:pb1x1:pe1x1:exclude:floor", true},
    {"v3_block_avg17", v3, "avg:f32:n1c768:h17w17:k3x3:s1x1:pb1x1:pe1x1:exclude:floor", true},
    {"v3_block_avg8", v3, "avg:f32:n1c1280:h8w8:k3x3:s1x1:pb1x1:pe1x1:exclude:floor", true},
    {"v3_reduce_max35", v3, "max:f32:n1c288:h35w35:k3x3:s2x2:pb0x0:pe0x0:floor", true},
    {"v3_reduce_max17", v3, "max:f32:n1c768:h17w17:k3x3:s2x2:pb0x0:pe0x0:floor", true},
    {"v3_global_avg", v3, "avg:f32:n1c2048:h8w8:k8x8:s1x1:pb0x0:pe0x0:exclude:floor", true},
    // Caffe's ceil rounding on the stem; the auxiliary classifier's 5x5 stride-3 average.
    {"v1_pool1", v1, "max:f32:n1c64:h112w112:k3x3:s2x2:pb0x0:pe0x0:ceil"},
    {"v1_aux_avg", v1, "avg:f32:n1c512:h14w14:k5x5:s3x3:pb0x0:pe0x0:exclude:floor"},
    {"v1_3a_pool", v1, "max:f32:n1c192:h28w28:k3x3:s1x1:pb1x1:pe1x1:floor"},
    // 2x2x2 stride-2 max pools.
    {"unet3d_pool1", unet3d, "max:f32:n1c32:d64h64w64:k2x2x2:s2x2x2:pb0x0x0:pe0x0x0:floor", true},
    {"unet3d_pool2", unet3d, "max:f32:n1c64:d32h32w32:k2x2x2:s2x2x2:pb0x0x0:pe0x0x0:floor", true},
    {"unet3d_pool3", unet3d, "max:f32:n1c128:d16h16w16:k2x2x2:s2x2x2:pb0x0x0:pe0x0x0:floor", true},
    // Three stride-1 max pools of one input, padded by half the window so that the outputs keep
    // its size (and are concatenated with it).
    {"spp13_max5", yolo_spp13, "max:f32:n1c512:h13w13:k5x5:s1x1:pb2x2:pe2x2:floor", true},
    {"spp13_max9", yolo_spp13, "max:f32:n1c512:h13w13:k9x9:s1x1:pb4x4:pe4x4:floor", true},
    {"spp13_max13", yolo_spp13, "max:f32:n1c512:h13w13:k13x13:s1x1:pb6x6:pe6x6:floor", true},
    {"spp20_max5", yolo_spp20, "max:f32:n1c512:h20w20:k5x5:s1x1:pb2x2:pe2x2:floor", true},
    {"spp20_max9", yolo_spp20, "max:f32:n1c512:h20w20:k9x9:s1x1:pb4x4:pe4x4:floor", true},
    {"spp20_max13", yolo_spp20, "max:f32:n1c512:h20w20:k13x13:s1x1:pb6x6:pe6x6:floor", true},
};

}  // namespace

std::span<const NetworkLayer> network_layers() { return layers; }

}  // namespace poolspec
