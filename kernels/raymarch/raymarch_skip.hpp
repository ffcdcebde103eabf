// Empty-space skipping for the ray marcher (issue 26): a coarse grid of
// bricks, each holding the least and the greatest value its samples can
// read, and a march that leaves out the samples of bricks where the mode's
// update provably changes nothing, so that the image is the plain march's
// bit for bit (raymarch_ops.hpp's per-sample functions do the work of both).
//
// A brick covers B × B × B cells (B a power of two): cells [b·B, b·B + B) per axis, whose
// samples read points [b·B, b·B + B]. Its range is taken over one point
// more on each side, [b·B − 1, b·B + B + 1] (clamped to the grid), so a
// sample that the march places in a brick by continuous arithmetic, but
// whose rounded coordinates fall up to a cell outside it, still reads only
// points the range covers. The margin holds while rounding moves a sample by
// less than a cell: the executor checks skip_fits() before using bricks.
//
// Which samples change nothing (a bound of the trilinear value from the
// brick's range, with a slack for the lerps' rounding, none for a brick of
// one value, whose lerps are exact):
//  - emission-absorption: the bound ≤ the transfer range's low end (ea_add
//    adds nothing for such a value);
//  - mip: the bound ≤ max(running maximum, low end): the maximum either
//    stays or moves below the low end, where the colour is the same; a ray
//    whose maximum reaches the range's top stops (the colour saturates);
//  - isosurface (fixed steps): every value on the side of the isovalue that
//    the last sample was on (no crossing can start inside).
// Sphere tracing (distance fields) already steps over empty space and is
// not skipped.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/raymarch/raymarch_ops.hpp"

namespace gf {

// The brick grid: l.n bricks per axis (dense), the range of brick (i, j, k)
// at mn[l.index(i, j, k)], mx[...]; B cells a brick edge.
template <class T>
struct Bricks {
  Layout l;
  const T* mn = nullptr;
  const T* mx = nullptr;
  int B = 8;      // a power of two
  int shift = 3;  // log2(B)
  int chunk = 0;  // the samples of a skipping march's chunk; 0: skip_chunk()
};

// Bricks per axis of a volume of n points per axis.
inline Layout brick_layout(const Layout& v, int B) {
  std::int64_t nb[3];
  for (int c = 0; c < 3; ++c) {
    const std::int64_t cells = v.n[c] > 1 ? v.n[c] - 1 : 1;
    nb[c] = (cells + B - 1) / B;
  }
  return Layout::dense(nb);
}

// The points brick b covers along an axis of n points: [lo, hi].
GF_HD void brick_points(std::int64_t b, int B, std::int64_t n, std::int64_t& lo, std::int64_t& hi) {
  lo = b * B - 1;
  lo = lo > 0 ? lo : 0;
  hi = b * B + B + 1;
  hi = hi < n - 1 ? hi : n - 1;
}

// The least and greatest value of brick (bi, bj, bk): the reference, a plain
// loop (the GPU reduces the same points in a warp: min and max are exact in
// any order).
template <class T>
void brick_range(const FieldView<const T>& v, int B, std::int64_t bi, std::int64_t bj,
                 std::int64_t bk, T& mn, T& mx) {
  std::int64_t lo[3], hi[3];
  const std::int64_t b[3] = {bi, bj, bk};
  for (int c = 0; c < 3; ++c) brick_points(b[c], B, v.n[c], lo[c], hi[c]);
  mn = v(lo[0], lo[1], lo[2]);
  mx = mn;
  for (std::int64_t k = lo[2]; k <= hi[2]; ++k)
    for (std::int64_t j = lo[1]; j <= hi[1]; ++j)
      for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
        const T s = v(i, j, k);
        mn = s < mn ? s : mn;
        mx = s > mx ? s : mx;
      }
}

// The brick grid of a volume on the host (the reference of the GPU's brick
// kernel, and the CPU tests' bricks): mn and mx are sized and filled.
template <class T>
Bricks<T> host_bricks(const FieldView<const T>& v, int B, std::vector<T>& mn, std::vector<T>& mx) {
  Bricks<T> br;
  br.l = brick_layout(v, B);
  br.B = B;
  while ((1 << br.shift) < B) ++br.shift;
  while ((1 << br.shift) > B) --br.shift;
  mn.assign(std::size_t(br.l.size()), T(0));
  mx.assign(std::size_t(br.l.size()), T(0));
  for (std::int64_t bk = 0; bk < br.l.n[2]; ++bk)
    for (std::int64_t bj = 0; bj < br.l.n[1]; ++bj)
      for (std::int64_t bi = 0; bi < br.l.n[0]; ++bi) {
        const std::size_t q = std::size_t(br.l.index(bi, bj, bk));
        brick_range(v, B, bi, bj, bk, mn[q], mx[q]);
      }
  br.mn = mn.data();
  br.mx = mx.data();
  return br;
}

// How far the rounding of three lerps can carry a trilinear value beyond the
// range of its corners: a few units in the last place of the largest.
template <class T>
GF_HD T lerp_slack(T mn, T mx) {
  const T eps = sizeof(T) == 4 ? T(1.1920929e-7) : T(2.220446049250313e-16);
  const T m = (mn < T(0) ? -mn : mn) > (mx < T(0) ? -mx : mx) ? (mn < T(0) ? -mn : mn)
                                                              : (mx < T(0) ? -mx : mx);
  return T(16) * eps * m;
}

// Bounds of any sample a brick of range [mn, mx] gives.
template <class T>
GF_HD T brick_upper(T mn, T mx) {
  return mn == mx ? mx : mx + lerp_slack(mn, mx);
}
template <class T>
GF_HD T brick_lower(T mn, T mx) {
  return mn == mx ? mn : mn - lerp_slack(mn, mx);
}

// Whether emission-absorption leaves out every sample of a brick of range
// [mn, mx]: at or below the range's low end, it is transparent. The share of
// such bricks decides whether an emission-absorption frame skips at all
// (RaySkip::Auto; MIP and the isosurface always skip).
template <class T>
GF_HD bool brick_skippable(const RayArgs<T>& a, T mn, T mx) {
  return brick_upper(mn, mx) <= a.lo;
}

// Whether rounding moves a sample by less than a cell (the bricks' margin):
// a sample's cell coordinate u = eye + t·dir carries an error of a few ulps
// of |eye| + t·|dir| (cells), so the farthest point of the volume from the
// eye bounds it. Half a cell for safety.
template <class T>
bool skip_fits(const RayArgs<T>& a, const Layout& v) {
  const double eps = sizeof(T) == 4 ? 1.1920929e-7 : 2.220446049250313e-16;
  double far = 0;
  for (int c = 0; c < 3; ++c) {
    const double e = (double(a.eye[c]) - double(a.origin[c])) / double(a.h[c]);
    const double d = (e < 0 ? -e : e) + double(v.n[c]);
    far += d;
  }
  return 64 * eps * far < 0.5;
}

// The brick a sample at cell coordinates u reads (the sampler's cells):
// its index per axis in b, its place in the brick grid returned.
template <class T, class I>
GF_HD I brick_of(const Layout& v, const Bricks<T>& br, const T u[3], I b[3]) {
  for (int c = 0; c < 3; ++c) {
    T f;
    b[c] = cell_of(u[c], I(v.n[c] - 1), f) >> br.shift;
  }
  return br.l.template index_as<I>(b[0], b[1], b[2]);
}

// The samples of a chunk (render_pixel_skip): the most, a power of two up
// to 64, whose span along any axis (a step moves at most a.step / min(h)
// cells) is at most a brick's edge, so that a chunk touches at most two
// bricks an axis. Measured on an H100 (docs/performance.md): chunks of a
// brick's edge beat chunks of half of it at 256³-512³ in every mode (256³
// 1920×1080: emission-absorption 0.96 against 1.08 ms, isosurface 0.60
// against 0.76), and a quarter of it lost by a third.
template <class T>
GF_HD int skip_chunk(const RayArgs<T>& a, int B) {
  T hmin = a.h[0] < a.h[1] ? a.h[0] : a.h[1];
  hmin = hmin < a.h[2] ? hmin : a.h[2];
  const T cells = a.step / hmin;
  int m = 1;
  while (m < 64 && T(2 * m) * cells <= T(B)) m *= 2;
  return m;
}

// Whether every brick in the box between the bricks of cell coordinates ua
// and ub holds values `empty(mn, mx)` says a sample of it leaves unchanged.
// A ray's cell coordinates are monotone along each axis as its samples go on
// (t and the rounding of eye + t·dir are), so every sample between the two
// lies in that box.
template <class T, class I, class E>
GF_HD bool bricks_empty(const Layout& v, const Bricks<T>& br, const T ua[3], const T ub[3],
                        const E& empty) {
  I lo[3], hi[3];
  brick_of<T, I>(v, br, ua, lo);
  brick_of<T, I>(v, br, ub, hi);
  for (int c = 0; c < 3; ++c)
    if (hi[c] < lo[c]) {
      const I x = lo[c];
      lo[c] = hi[c];
      hi[c] = x;
    }
  for (I k = lo[2]; k <= hi[2]; ++k)
    for (I j = lo[1]; j <= hi[1]; ++j)
      for (I i = lo[0]; i <= hi[0]; ++i) {
        const I q = br.l.template index_as<I>(i, j, k);
        if (!empty(br.mn[q], br.mx[q])) return false;
      }
  return true;
}

// One pixel as render_pixel draws it, leaving out the samples the bricks
// show to change nothing. The samples go in chunks of skip_chunk(): every
// lane of a warp tests its chunk's bricks at once and then takes the chunk's
// samples (or leaves them out) in a loop of the same length, so a warp's
// lanes part only between sampling and skipping, and stay at the same sample
// of their rays (neighbouring rays, neighbouring cells: the caches serve
// them together; jumping a lane to where its empty bricks end, beyond the
// chunk, was slower). (Looking up each brick
// where a ray enters it, at its exact exit, made a warp wait at every brick
// face some lane crossed: on a volume with nothing to skip, twice the plain
// march's time.)
template <class T, class I, class S>
GF_HD void render_pixel_skip(const RayArgs<T>& a, const S& sample, const Layout& l,
                             const Bricks<T>& br, int px, int py, float out[4]) {
  T dir[3], t0, t1;
  pixel_ray(a, px, py, dir);
  float rgb[3] = {0, 0, 0};
  if (!ray_box(a, l, dir, t0, t1)) {
    for (int c = 0; c < 3; ++c) out[c] = a.background[c];
    out[3] = 0;
    return;
  }
  const RayCells<T> r = ray_cells(a, dir);
  const std::int64_t chunk = br.chunk > 0 ? br.chunk : skip_chunk(a, br.B);
  float A = 0;
  T m = T(-1e30), thit = T(-1);
  const std::int64_t steps = march_steps(a, t0, t1);
  T u[3], ub[3];
  if (a.mode != RayMode::Isosurface) {
    const bool ea = a.mode == RayMode::EmissionAbsorption;
    const Transfer<T> tr(a);
    std::int64_t k = 0;
    bool done = false;
    while (k < steps && !done) {
      if (!ea && m >= a.hi) break;  // transfer_t(m) is 1 from here on
      const std::int64_t end = k + chunk < steps ? k + chunk : steps;
      T ta, tb;
      ea_step(a, end - 1, t0, t1, ta, tb);  // the chunk's last sample
      r.at(T(0.5) * (ta + tb), ub);
      ea_step(a, k, t0, t1, ta, tb);  // and its first
      r.at(T(0.5) * (ta + tb), u);
      // MIP: a sample at or below both the maximum so far and the range's low
      // end leaves the colour as it is, unless the range is empty in T (then
      // a value at the low end is at the top: transfer_t is 1)
      const T floor = ea ? a.lo : (m > a.lo || !(a.lo < a.hi) ? m : a.lo);
      if (bricks_empty<T, I>(l, br, u, ub,
                             [floor](T mn, T mx) { return brick_upper(mn, mx) <= floor; })) {
        k = end;
        continue;
      }
      for (; k < end; ++k) {
        if (!ea_step(a, k, t0, t1, ta, tb) && ea) {  // the last step, rounded away
          done = true;
          break;
        }
        r.at(T(0.5) * (ta + tb), u);
        const T s = sample(u);
        if (ea) {
          ea_add(a, tr, s, ta, tb, rgb, A);
          if (!(A < kOpaque)) {
            done = true;
            break;
          }
        } else {
          m = s > m ? s : m;
        }
      }
    }
  } else if (a.sphere_trace) {
    thit = march_isosurface(a, sample, r, t0, t1);
  } else {
    r.at(t0, u);
    T fa = sample(u) - a.isovalue;
    if (fa == T(0)) {
      thit = t0;
    } else {
      T ta = t0;
      std::int64_t k = 1;
      bool done = false;
      while (k <= steps && !done) {
        const std::int64_t end = k + chunk < steps + 1 ? k + chunk : steps + 1;
        r.at(iso_t(a, end - 1, t0, t1), ub);
        r.at(iso_t(a, k, t0, t1), u);
        const bool below = fa < T(0);
        const T iso = a.isovalue;
        if (bricks_empty<T, I>(l, br, u, ub, [below, iso](T mn, T mx) {
              return below ? brick_upper(mn, mx) < iso : brick_lower(mn, mx) > iso;
            })) {  // the chunk's samples all on fa's side: no crossing
          ta = iso_t(a, end - 1, t0, t1);
          k = end;
          continue;
        }
        for (; k < end; ++k) {
          const T tb = iso_t(a, k, t0, t1);
          if (!(tb > ta)) {
            done = true;
            break;
          }
          r.at(tb, u);
          const T fb = sample(u) - a.isovalue;
          if (iso_crosses(fa, fb)) {
            thit = iso_refine(a, sample, r, ta, tb, fa);
            done = true;
            break;
          }
          ta = tb;
          fa = fb;
        }
      }
    }
  }
  finish_pixel(a, sample, r, dir, rgb, A, m, thit, out);
}

}  // namespace gf
