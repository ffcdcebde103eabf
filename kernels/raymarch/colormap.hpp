// Colormaps of the raymarch transfer function: 17 knots of matplotlib's maps
// (t = 0, 1/16, ..., 1), linearly interpolated. One table, read from constant
// memory on the GPU and from a plain array on the CPU.
#pragma once
#include "kernels/ops/hd.hpp"

namespace gf {

enum class Colormap : int { Viridis = 0, Inferno = 1, Grayscale = 2, Coolwarm = 3 };

inline constexpr int kColormapKnots = 17;

// clang-format off
#define GF_COLORMAP_TABLE {                                                                      \
  { /* viridis */                                                                               \
    {0.2670f, 0.0049f, 0.3294f}, {0.2823f, 0.0950f, 0.4173f}, {0.2788f, 0.1755f, 0.4834f},      \
    {0.2590f, 0.2515f, 0.5247f}, {0.2297f, 0.3224f, 0.5457f}, {0.1994f, 0.3876f, 0.5546f},      \
    {0.1727f, 0.4488f, 0.5579f}, {0.1490f, 0.5081f, 0.5573f}, {0.1276f, 0.5669f, 0.5506f},      \
    {0.1206f, 0.6258f, 0.5335f}, {0.1579f, 0.6838f, 0.5017f}, {0.2461f, 0.7389f, 0.4520f},      \
    {0.3692f, 0.7889f, 0.3829f}, {0.5160f, 0.8312f, 0.2943f}, {0.6785f, 0.8637f, 0.1895f},      \
    {0.8456f, 0.8873f, 0.0997f}, {0.9932f, 0.9062f, 0.1439f}},                                  \
  { /* inferno */                                                                               \
    {0.0015f, 0.0005f, 0.0139f}, {0.0423f, 0.0281f, 0.1411f}, {0.1293f, 0.0473f, 0.2908f},      \
    {0.2383f, 0.0366f, 0.3964f}, {0.3415f, 0.0623f, 0.4294f}, {0.4412f, 0.0993f, 0.4316f},      \
    {0.5409f, 0.1347f, 0.4151f}, {0.6401f, 0.1714f, 0.3811f}, {0.7357f, 0.2159f, 0.3302f},      \
    {0.8224f, 0.2752f, 0.2661f}, {0.8943f, 0.3534f, 0.1936f}, {0.9470f, 0.4492f, 0.1153f},      \
    {0.9784f, 0.5579f, 0.0349f}, {0.9879f, 0.6753f, 0.0653f}, {0.9746f, 0.7977f, 0.2063f},      \
    {0.9476f, 0.9174f, 0.4107f}, {0.9884f, 0.9984f, 0.6449f}},                                  \
  { /* grayscale */                                                                             \
    {0.0f, 0.0f, 0.0f}, {0.0625f, 0.0625f, 0.0625f}, {0.125f, 0.125f, 0.125f},                  \
    {0.1875f, 0.1875f, 0.1875f}, {0.25f, 0.25f, 0.25f}, {0.3125f, 0.3125f, 0.3125f},            \
    {0.375f, 0.375f, 0.375f}, {0.4375f, 0.4375f, 0.4375f}, {0.5f, 0.5f, 0.5f},                  \
    {0.5625f, 0.5625f, 0.5625f}, {0.625f, 0.625f, 0.625f}, {0.6875f, 0.6875f, 0.6875f},         \
    {0.75f, 0.75f, 0.75f}, {0.8125f, 0.8125f, 0.8125f}, {0.875f, 0.875f, 0.875f},               \
    {0.9375f, 0.9375f, 0.9375f}, {1.0f, 1.0f, 1.0f}},                                           \
  { /* coolwarm */                                                                              \
    {0.2298f, 0.2987f, 0.7537f}, {0.3042f, 0.4069f, 0.8453f}, {0.3837f, 0.5102f, 0.9178f},      \
    {0.4677f, 0.6056f, 0.9685f}, {0.5543f, 0.6901f, 0.9955f}, {0.6408f, 0.7608f, 0.9978f},      \
    {0.7240f, 0.8149f, 0.9757f}, {0.8006f, 0.8504f, 0.9300f}, {0.8674f, 0.8644f, 0.8626f},      \
    {0.9256f, 0.8255f, 0.7711f}, {0.9595f, 0.7670f, 0.6741f}, {0.9697f, 0.6905f, 0.5751f},      \
    {0.9567f, 0.5980f, 0.4773f}, {0.9214f, 0.4914f, 0.3834f}, {0.8654f, 0.3711f, 0.2958f},      \
    {0.7906f, 0.2314f, 0.2162f}, {0.7057f, 0.0156f, 0.1502f}}}
// clang-format on

inline constexpr float kColormapHost[4][kColormapKnots][3] = GF_COLORMAP_TABLE;
#if defined(__CUDACC__)
// One copy per .cu file that includes this header (internal linkage). In
// global memory, not __constant__: neighbouring rays read different knots,
// which the constant cache serves one address at a time; L1 serves the
// table's few lines to a warp at once.
static __device__ const float kColormapDevice[4][kColormapKnots][3] = GF_COLORMAP_TABLE;
#endif

// The colour of t (clamped to [0, 1]; NaN reads as 0) in map m.
GF_HD void colormap_rgb(Colormap m, float t, float rgb[3]) {
  t = t > 0.0f ? (t < 1.0f ? t : 1.0f) : 0.0f;
  const float u = t * float(kColormapKnots - 1);
  int i = int(u);
  i = i < kColormapKnots - 2 ? i : kColormapKnots - 2;
  const float f = u - float(i);
#if defined(__CUDA_ARCH__)
  const float(*tab)[3] = kColormapDevice[int(m)];
#else
  const float(*tab)[3] = kColormapHost[int(m)];
#endif
  for (int c = 0; c < 3; ++c) rgb[c] = tab[i][c] + f * (tab[i + 1][c] - tab[i][c]);
}

}  // namespace gf
