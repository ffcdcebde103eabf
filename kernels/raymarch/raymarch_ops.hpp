// The point formulas of the raymarch workload (SPEC §1): the ray of a pixel,
// its entry into the volume's box, trilinear sampling, the gradient, the
// transfer function and the three modes. render_pixel() is the whole work of
// one pixel; the CPU loop and the CUDA kernel both call it and differ only in
// how they walk the image.
#pragma once
#include <cmath>
#include <cstdint>

#include "grid/view.hpp"
#include "kernels/raymarch/colormap.hpp"
#include "kernels/ops/hd.hpp"

namespace gf {

enum class RayMode : int { EmissionAbsorption = 0, Mip = 1, Isosurface = 2 };

// Everything a pixel needs besides the volume's view, by value (a kernel
// argument). Positions and lengths are in the grid's physical units.
template <class T>
struct RayArgs {
  // The volume's point i (of the view's n per axis) sits at origin + i·h.
  T origin[3] = {0, 0, 0};
  T h[3] = {1, 1, 1};
  // The camera: eye, and the orthonormal forward, right and up of the view.
  T eye[3] = {0, 0, 0};
  T fwd[3] = {1, 0, 0}, right[3] = {0, -1, 0}, up[3] = {0, 0, 1};
  T tan_half = 0.36397023f;  // tan(vertical field of view / 2)
  int width = 1, height = 1;
  RayMode mode = RayMode::EmissionAbsorption;
  Colormap colormap = Colormap::Viridis;
  T lo = 0, hi = 1;  // value range of the transfer function
  T density = 1;     // extinction per unit length at the top of the range
  T isovalue = 0;
  T step = 1;                 // march step (physical length)
  bool sphere_trace = false;  // isosurface of a distance field: step by the distance
  T light[3] = {0, 0, 1};     // unit direction towards the light
  float background[3] = {0, 0, 0};
};

// Opacity at which emission-absorption stops marching (early ray termination).
inline constexpr float kOpaque = 0.995f;
// Bisection steps refining an isosurface crossing (the bracket shrinks 4096×).
inline constexpr int kBisections = 12;

template <class T>
GF_HD T rm_dot(const T a[3], const T b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

template <class T>
GF_HD void rm_normalize(T v[3]) {
  const T len = std::sqrt(rm_dot(v, v));
  if (len > T(0))
    for (int c = 0; c < 3; ++c) v[c] /= len;
}

// The ray through the centre of pixel (px, py); row 0 is the top of the image.
template <class T>
GF_HD void pixel_ray(const RayArgs<T>& a, int px, int py, T dir[3]) {
  const T aspect = T(a.width) / T(a.height);
  const T sx = (T(2) * (T(px) + T(0.5)) / T(a.width) - T(1)) * a.tan_half * aspect;
  const T sy = (T(1) - T(2) * (T(py) + T(0.5)) / T(a.height)) * a.tan_half;
  for (int c = 0; c < 3; ++c) dir[c] = a.fwd[c] + sx * a.right[c] + sy * a.up[c];
  rm_normalize(dir);
}

// The part [t0, t1] (t0 ≥ 0) of the ray eye + t·dir inside the volume's box;
// false when it misses the box.
template <class T>
GF_HD bool ray_box(const RayArgs<T>& a, const FieldView<const T>& v, const T dir[3], T& t0, T& t1) {
  t0 = 0;
  t1 = T(1e30);
  for (int c = 0; c < 3; ++c) {
    const T lo = a.origin[c], hi = a.origin[c] + T(v.n[c] - 1) * a.h[c];
    if (dir[c] == T(0)) {
      if (a.eye[c] < lo || a.eye[c] > hi) return false;
      continue;
    }
    T ta = (lo - a.eye[c]) / dir[c], tb = (hi - a.eye[c]) / dir[c];
    if (ta > tb) {
      const T s = ta;
      ta = tb;
      tb = s;
    }
    t0 = ta > t0 ? ta : t0;
    t1 = tb < t1 ? tb : t1;
  }
  return t0 < t1;
}

// Trilinear interpolation of the volume at physical point p (clamped to the box).
template <class T>
GF_HD T sample_volume(const RayArgs<T>& a, const FieldView<const T>& v, const T p[3]) {
  std::int64_t i0[3];
  T f[3];
  for (int c = 0; c < 3; ++c) {
    const std::int64_t last = v.n[c] - 1;
    T u = (p[c] - a.origin[c]) / a.h[c];
    u = u > T(0) ? (u < T(last) ? u : T(last)) : T(0);
    std::int64_t i = std::int64_t(u);
    i = i < last - 1 ? i : (last > 0 ? last - 1 : 0);
    i0[c] = i;
    f[c] = last > 0 ? u - T(i) : T(0);
  }
  // (a single point on an axis: its neighbour is itself)
  const std::int64_t sx = v.n[0] > 1 ? 1 : 0, sy = v.n[1] > 1 ? v.sy : 0,
                     sz = v.n[2] > 1 ? v.sz : 0;
  const T* q = &v(i0[0], i0[1], i0[2]);
  const T c00 = q[0] + f[0] * (q[sx] - q[0]);
  const T c10 = q[sy] + f[0] * (q[sy + sx] - q[sy]);
  const T c01 = q[sz] + f[0] * (q[sz + sx] - q[sz]);
  const T c11 = q[sz + sy] + f[0] * (q[sz + sy + sx] - q[sz + sy]);
  const T c0 = c00 + f[1] * (c10 - c00);
  const T c1 = c01 + f[1] * (c11 - c01);
  return c0 + f[2] * (c1 - c0);
}

template <class T>
GF_HD void ray_point(const RayArgs<T>& a, const T dir[3], T t, T p[3]) {
  for (int c = 0; c < 3; ++c) p[c] = a.eye[c] + t * dir[c];
}

// The value's place in the transfer function's range, in [0, 1].
template <class T>
GF_HD float transfer_t(const RayArgs<T>& a, T s) {
  const T t = (s - a.lo) / (a.hi - a.lo);
  return float(t > T(0) ? (t < T(1) ? t : T(1)) : T(0));
}

// The gradient by central differences of the interpolated volume, one cell apart.
template <class T>
GF_HD void volume_gradient(const RayArgs<T>& a, const FieldView<const T>& v, const T p[3], T g[3]) {
  for (int c = 0; c < 3; ++c) {
    T q[3] = {p[0], p[1], p[2]};
    q[c] = p[c] + a.h[c];
    const T s1 = sample_volume(a, v, q);
    q[c] = p[c] - a.h[c];
    const T s0 = sample_volume(a, v, q);
    g[c] = (s1 - s0) / (T(2) * a.h[c]);
  }
}

// Blinn-Phong with one light and a little ambient; the normal faces the viewer.
template <class T>
GF_HD void shade_surface(const RayArgs<T>& a, const FieldView<const T>& v, const T p[3], const T dir[3],
                         float rgb[3]) {
  T n[3];
  volume_gradient(a, v, p, n);
  if (!(rm_dot(n, n) > T(0)))
    for (int c = 0; c < 3; ++c) n[c] = -dir[c];
  rm_normalize(n);
  if (rm_dot(n, dir) > T(0))
    for (int c = 0; c < 3; ++c) n[c] = -n[c];
  T hv[3] = {a.light[0] - dir[0], a.light[1] - dir[1], a.light[2] - dir[2]};
  rm_normalize(hv);
  const T nl = rm_dot(n, a.light), nh = rm_dot(n, hv);
  const float diffuse = float(nl > T(0) ? nl : T(0));
  float spec = float(nh > T(0) ? nh : T(0));
  spec = spec * spec;
  spec = spec * spec;
  spec = spec * spec;
  spec = spec * spec;
  spec = spec * spec;  // ^32
  float base[3];
  colormap_rgb(a.colormap, transfer_t(a, a.isovalue), base);
  for (int c = 0; c < 3; ++c) {
    const float x = base[c] * (0.2f + 0.8f * diffuse) + 0.3f * spec;
    rgb[c] = x < 1.0f ? x : 1.0f;
  }
}

// Front-to-back emission-absorption over [t0, t1]: samples at the middle of
// fixed steps, opacity 1 − exp(−density·t·ds), stopping once nearly opaque.
template <class T>
GF_HD float march_emission(const RayArgs<T>& a, const FieldView<const T>& v, const T dir[3], T t0, T t1,
                           float rgb[3]) {
  float A = 0;
  const std::int64_t steps = std::int64_t(std::ceil((t1 - t0) / a.step));
  for (std::int64_t k = 0; k < steps && A < kOpaque; ++k) {
    const T ta = t0 + T(k) * a.step;
    const T tb = ta + a.step < t1 ? ta + a.step : t1;
    if (!(tb > ta)) break;  // the last step, rounded away
    T p[3];
    ray_point(a, dir, T(0.5) * (ta + tb), p);
    const float t = transfer_t(a, sample_volume(a, v, p));
    const float alpha = 1.0f - float(std::exp(-a.density * T(t) * (tb - ta)));
    float c[3];
    colormap_rgb(a.colormap, t, c);
    const float w = (1.0f - A) * alpha;
    for (int i = 0; i < 3; ++i) rgb[i] += w * c[i];
    A += w;
  }
  return A;
}

// Maximum intensity over the same samples as emission-absorption.
template <class T>
GF_HD T march_max(const RayArgs<T>& a, const FieldView<const T>& v, const T dir[3], T t0, T t1) {
  const std::int64_t steps = std::int64_t(std::ceil((t1 - t0) / a.step));
  T m = T(-1e30);
  for (std::int64_t k = 0; k < steps; ++k) {
    const T ta = t0 + T(k) * a.step;
    const T tb = ta + a.step < t1 ? ta + a.step : t1;
    T p[3];
    ray_point(a, dir, T(0.5) * (ta + tb), p);
    const T s = sample_volume(a, v, p);
    m = s > m ? s : m;
  }
  return m;
}

// The first t in [t0, t1] where the volume crosses the isovalue, or −1. Fixed
// steps, or sphere tracing (steps of the distance to the isovalue, at least
// one step) for a distance field; the crossing is refined by bisection.
template <class T>
GF_HD T march_isosurface(const RayArgs<T>& a, const FieldView<const T>& v, const T dir[3], T t0, T t1) {
  T p[3];
  ray_point(a, dir, t0, p);
  T fa = sample_volume(a, v, p) - a.isovalue;
  if (fa == T(0)) return t0;
  T ta = t0;
  // A march that steps at least a.step reaches t1 within this many steps.
  const std::int64_t max_steps = std::int64_t(std::ceil((t1 - t0) / a.step)) + 1;
  for (std::int64_t k = 0; k < max_steps && ta < t1; ++k) {
    T d = a.step;
    if (a.sphere_trace) {
      const T dist = T(0.9) * (fa < T(0) ? -fa : fa);
      d = dist > d ? dist : d;
    }
    const T tb = ta + d < t1 ? ta + d : t1;
    ray_point(a, dir, tb, p);
    const T fb = sample_volume(a, v, p) - a.isovalue;
    if ((fa < T(0)) != (fb < T(0)) || fb == T(0)) {
      T lo = ta, hi = tb;
      for (int i = 0; i < kBisections; ++i) {
        const T mid = T(0.5) * (lo + hi);
        ray_point(a, dir, mid, p);
        const T fm = sample_volume(a, v, p) - a.isovalue;
        if ((fm < T(0)) == (fa < T(0)) && fm != T(0))
          lo = mid;
        else
          hi = mid;
      }
      return T(0.5) * (lo + hi);
    }
    ta = tb;
    fa = fb;
  }
  return T(-1);
}

// One pixel: RGB composited over the background and the coverage (alpha),
// into out[0..3].
template <class T>
GF_HD void render_pixel(const RayArgs<T>& a, const FieldView<const T>& v, int px, int py, float out[4]) {
  T dir[3], t0, t1;
  pixel_ray(a, px, py, dir);
  float rgb[3] = {0, 0, 0};
  float A = 0;
  if (ray_box(a, v, dir, t0, t1)) {
    if (a.mode == RayMode::EmissionAbsorption) {
      A = march_emission(a, v, dir, t0, t1, rgb);
    } else if (a.mode == RayMode::Mip) {
      colormap_rgb(a.colormap, transfer_t(a, march_max(a, v, dir, t0, t1)), rgb);
      A = 1;
    } else {
      const T t = march_isosurface(a, v, dir, t0, t1);
      if (t >= T(0)) {
        T p[3];
        ray_point(a, dir, t, p);
        shade_surface(a, v, p, dir, rgb);
        A = 1;
      }
    }
  }
  for (int c = 0; c < 3; ++c) out[c] = rgb[c] + (1.0f - A) * a.background[c];
  out[3] = A;
}

}  // namespace gf
