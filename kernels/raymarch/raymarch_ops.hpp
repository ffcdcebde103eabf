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
GF_HD bool ray_box(const RayArgs<T>& a, const Layout& v, const T dir[3], T& t0, T& t1) {
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

// The ray in the volume's cell coordinates (u = (p − origin)/h: point i at
// u = i): u(t) = eye + t·dir for the physical distance t along the ray. A
// sample's position costs three products and sums, no division.
template <class T>
struct RayCells {
  T eye[3], dir[3];
  GF_HD void at(T t, T u[3]) const {
    for (int c = 0; c < 3; ++c) u[c] = eye[c] + t * dir[c];
  }
};

template <class T>
GF_HD RayCells<T> ray_cells(const RayArgs<T>& a, const T dir[3]) {
  RayCells<T> r;
  for (int c = 0; c < 3; ++c) {
    r.eye[c] = (a.eye[c] - a.origin[c]) / a.h[c];
    r.dir[c] = dir[c] / a.h[c];
  }
  return r;
}

// The cell of coordinate u along an axis of `last` + 1 points (clamped to
// the grid: [0, last − 1], 0 on a one-point axis) and the fraction f ∈ [0, 1]
// into it. The sampler and the skipping march (raymarch_skip.hpp) both place
// a sample by this.
template <class T, class I>
GF_HD I cell_of(T u, I last, T& f) {
  u = u > T(0) ? (u < T(last) ? u : T(last)) : T(0);
  I i = I(u);
  i = i < last - 1 ? i : (last > 0 ? last - 1 : 0);
  f = last > 0 ? u - T(i) : T(0);
  return i;
}

// Trilinear interpolation of the volume at cell coordinates u (clamped to
// the box), indices in I (32-bit on the GPU when the field spans fewer than
// 2³¹ values). Every executor samples through this.
template <class T, class I = std::int64_t>
struct Trilinear {
  FieldView<const T> v;
  GF_HD T operator()(const T u[3]) const {
    I i0[3];
    T f[3];
    for (int c = 0; c < 3; ++c) i0[c] = cell_of(u[c], I(v.n[c] - 1), f[c]);
    // (a single point on an axis: its neighbour is itself)
    const I sx = v.n[0] > 1 ? 1 : 0, sy = v.n[1] > 1 ? I(v.sy) : 0, sz = v.n[2] > 1 ? I(v.sz) : 0;
    const T* q = v.p + v.template index_as<I>(i0[0], i0[1], i0[2]);
    const T c00 = q[0] + f[0] * (q[sx] - q[0]);
    const T c10 = q[sy] + f[0] * (q[sy + sx] - q[sy]);
    const T c01 = q[sz] + f[0] * (q[sz + sx] - q[sz]);
    const T c11 = q[sz + sy] + f[0] * (q[sz + sy + sx] - q[sz + sy]);
    const T c0 = c00 + f[1] * (c10 - c00);
    const T c1 = c01 + f[1] * (c11 - c01);
    return c0 + f[2] * (c1 - c0);
  }
};

// The transfer function of a ray, its constants worked out once so that a
// sample multiplies where it would divide: the range's ends, 1/(hi − lo),
// and −density·log2(e) (a sample's opacity by exp2).
template <class T>
struct Transfer {
  T lo, hi, inv, k2;
  GF_HD explicit Transfer(const RayArgs<T>& a)
      : lo(a.lo), hi(a.hi), inv(T(1) / (a.hi - a.lo)), k2(-a.density * T(1.4426950408889634)) {}
  // The value's place in the range, in [0, 1]: exactly 1 from the top up
  // (s·inv may round below 1 there), 0 below the low end and for NaN.
  GF_HD float t(T s) const {
    if (!(s < hi)) return s >= hi ? 1.0f : 0.0f;
    const T x = (s - lo) * inv;
    return float(x > T(0) ? (x < T(1) ? x : T(1)) : T(0));
  }
};

// The value's place in the transfer function's range, in [0, 1].
template <class T>
GF_HD float transfer_t(const RayArgs<T>& a, T s) {
  return Transfer<T>(a).t(s);
}

// The gradient by central differences of the interpolated volume, one cell
// apart, at cell coordinates u (physical units: divided by 2h).
template <class T, class S>
GF_HD void volume_gradient(const RayArgs<T>& a, const S& sample, const T u[3], T g[3]) {
  for (int c = 0; c < 3; ++c) {
    T q[3] = {u[0], u[1], u[2]};
    q[c] = u[c] + T(1);
    const T s1 = sample(q);
    q[c] = u[c] - T(1);
    const T s0 = sample(q);
    g[c] = (s1 - s0) / (T(2) * a.h[c]);
  }
}

// Blinn-Phong with one light and a little ambient; the normal faces the viewer.
template <class T, class S>
GF_HD void shade_surface(const RayArgs<T>& a, const S& sample, const T u[3], const T dir[3],
                         float rgb[3]) {
  T n[3];
  volume_gradient(a, sample, u, n);
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

// ---- the samples of the three modes -----------------------------------------------
// A march visits samples k = 0, 1, ... at fixed steps from t0; each mode's
// per-sample update is one function here, called by the plain loops below
// (the CPU reference, and the GPU without empty-space skipping) and by the
// skipping march of raymarch_skip.hpp, which leaves out only samples whose
// update provably changes nothing.

// Emission-absorption's sample k lies in the middle of [ta, tb]:
// ta = t0 + k·step, tb = min(ta + step, t1). False: the step rounded away.
template <class T>
GF_HD bool ea_step(const RayArgs<T>& a, std::int64_t k, T t0, T t1, T& ta, T& tb) {
  ta = t0 + T(k) * a.step;
  tb = ta + a.step < t1 ? ta + a.step : t1;
  return tb > ta;
}

// Front-to-back compositing of sample value s over [ta, tb]: opacity
// 1 − exp(−density·t·(tb − ta)), as 1 − exp2(k2·t·(tb − ta)) (tr: the ray's
// Transfer of a). A value at or below the range's low end (t = 0) is
// transparent: it changes nothing, and is not computed.
template <class T>
GF_HD void ea_add(const RayArgs<T>& a, const Transfer<T>& tr, T s, T ta, T tb, float rgb[3],
                  float& A) {
  if (!(s > tr.lo)) return;
  const float t = tr.t(s);
  const float alpha = 1.0f - float(std::exp2(tr.k2 * T(t) * (tb - ta)));
  float c[3];
  colormap_rgb(a.colormap, t, c);
  const float w = (1.0f - A) * alpha;
  for (int i = 0; i < 3; ++i) rgb[i] += w * c[i];
  A += w;
}

// The number of samples of [t0, t1].
template <class T>
GF_HD std::int64_t march_steps(const RayArgs<T>& a, T t0, T t1) {
  return std::int64_t(std::ceil((t1 - t0) / a.step));
}

// Front-to-back emission-absorption over [t0, t1], stopping once nearly opaque.
template <class T, class S>
GF_HD float march_emission(const RayArgs<T>& a, const S& sample, const RayCells<T>& r, T t0, T t1,
                           float rgb[3]) {
  float A = 0;
  const Transfer<T> tr(a);
  const std::int64_t steps = march_steps(a, t0, t1);
  for (std::int64_t k = 0; k < steps && A < kOpaque; ++k) {
    T ta, tb, u[3];
    if (!ea_step(a, k, t0, t1, ta, tb)) break;  // the last step, rounded away
    r.at(T(0.5) * (ta + tb), u);
    ea_add(a, tr, sample(u), ta, tb, rgb, A);
  }
  return A;
}

// Maximum intensity over the same samples as emission-absorption.
template <class T, class S>
GF_HD T march_max(const RayArgs<T>& a, const S& sample, const RayCells<T>& r, T t0, T t1) {
  const std::int64_t steps = march_steps(a, t0, t1);
  T m = T(-1e30);
  for (std::int64_t k = 0; k < steps; ++k) {
    T ta, tb, u[3];
    ea_step(a, k, t0, t1, ta, tb);
    r.at(T(0.5) * (ta + tb), u);
    const T s = sample(u);
    m = s > m ? s : m;
  }
  return m;
}

// The isosurface march's sample k sits at min(t0 + k·step, t1).
template <class T>
GF_HD T iso_t(const RayArgs<T>& a, std::int64_t k, T t0, T t1) {
  const T t = t0 + T(k) * a.step;
  return t < t1 ? t : t1;
}

// The crossing in [ta, tb] (fa: the value's offset from the isovalue at ta;
// only its sign counts), refined by bisection.
template <class T, class S>
GF_HD T iso_refine(const RayArgs<T>& a, const S& sample, const RayCells<T>& r, T ta, T tb, T fa) {
  T lo = ta, hi = tb, u[3];
  for (int i = 0; i < kBisections; ++i) {
    const T mid = T(0.5) * (lo + hi);
    r.at(mid, u);
    const T fm = sample(u) - a.isovalue;
    if ((fm < T(0)) == (fa < T(0)) && fm != T(0))
      lo = mid;
    else
      hi = mid;
  }
  return T(0.5) * (lo + hi);
}

// Whether the march crosses the isovalue from fa to fb.
template <class T>
GF_HD bool iso_crosses(T fa, T fb) {
  return (fa < T(0)) != (fb < T(0)) || fb == T(0);
}

// The first t in [t0, t1] where the volume crosses the isovalue, or −1. Fixed
// steps (sample k at iso_t), or sphere tracing (steps of the distance to the
// isovalue, at least one step) for a distance field; the crossing is refined
// by bisection.
template <class T, class S>
GF_HD T march_isosurface(const RayArgs<T>& a, const S& sample, const RayCells<T>& r, T t0, T t1) {
  T u[3];
  r.at(t0, u);
  T fa = sample(u) - a.isovalue;
  if (fa == T(0)) return t0;
  T ta = t0;
  if (!a.sphere_trace) {
    const std::int64_t steps = march_steps(a, t0, t1);
    for (std::int64_t k = 1; k <= steps; ++k) {
      const T tb = iso_t(a, k, t0, t1);
      if (!(tb > ta)) break;
      r.at(tb, u);
      const T fb = sample(u) - a.isovalue;
      if (iso_crosses(fa, fb)) return iso_refine(a, sample, r, ta, tb, fa);
      ta = tb;
      fa = fb;
    }
    return T(-1);
  }
  // A march that steps at least a.step reaches t1 within this many steps.
  const std::int64_t max_steps = march_steps(a, t0, t1) + 1;
  for (std::int64_t k = 0; k < max_steps && ta < t1; ++k) {
    const T dist = T(0.9) * (fa < T(0) ? -fa : fa);
    const T d = dist > a.step ? dist : a.step;
    const T tb = ta + d < t1 ? ta + d : t1;
    r.at(tb, u);
    const T fb = sample(u) - a.isovalue;
    if (iso_crosses(fa, fb)) return iso_refine(a, sample, r, ta, tb, fa);
    ta = tb;
    fa = fb;
  }
  return T(-1);
}

// The pixel's colour from what its march found: emission-absorption's
// composited rgb and coverage A, mip's maximum m, the isosurface's hit t (or
// < 0), over the background, into out[0..3].
template <class T, class S>
GF_HD void finish_pixel(const RayArgs<T>& a, const S& sample, const RayCells<T>& r, const T dir[3],
                        float rgb[3], float A, T m, T t, float out[4]) {
  if (a.mode == RayMode::Mip) {
    colormap_rgb(a.colormap, transfer_t(a, m), rgb);
    A = 1;
  } else if (a.mode == RayMode::Isosurface && t >= T(0)) {
    T u[3];
    r.at(t, u);
    shade_surface(a, sample, u, dir, rgb);
    A = 1;
  }
  for (int c = 0; c < 3; ++c) out[c] = rgb[c] + (1.0f - A) * a.background[c];
  out[3] = A;
}

// One pixel: RGB composited over the background and the coverage (alpha),
// into out[0..3]. The plain march: every sample of every ray.
template <class T, class S>
GF_HD void render_pixel(const RayArgs<T>& a, const S& sample, const Layout& l, int px, int py,
                        float out[4]) {
  T dir[3], t0, t1;
  pixel_ray(a, px, py, dir);
  float rgb[3] = {0, 0, 0};
  if (!ray_box(a, l, dir, t0, t1)) {
    for (int c = 0; c < 3; ++c) out[c] = a.background[c];
    out[3] = 0;
    return;
  }
  const RayCells<T> r = ray_cells(a, dir);
  float A = 0;
  T m = T(-1e30), t = T(-1);
  if (a.mode == RayMode::EmissionAbsorption)
    A = march_emission(a, sample, r, t0, t1, rgb);
  else if (a.mode == RayMode::Mip)
    m = march_max(a, sample, r, t0, t1);
  else
    t = march_isosurface(a, sample, r, t0, t1);
  finish_pixel(a, sample, r, dir, rgb, A, m, t, out);
}

// The reference: trilinear samples of the view, 64-bit indices.
template <class T>
GF_HD void render_pixel(const RayArgs<T>& a, const FieldView<const T>& v, int px, int py,
                        float out[4]) {
  render_pixel(a, Trilinear<T>{v}, v, px, py, out);
}

}  // namespace gf
