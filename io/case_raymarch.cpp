// The raymarch: and render: sections (SPEC §3): volume (expr | sdf | file),
// mode, camera, transfer function, background; every key checked where it
// was written.
#include "io/case_raymarch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "io/case_sections.hpp"
#include "io/expression.hpp"
#include "io/input_file.hpp"
#include "io/output.hpp"
#include "io/workload.hpp"

namespace gf::raymarch_case {

namespace {

namespace fs = std::filesystem;
using schema::Map;
using schema::Value;

constexpr std::string_view kRaymarchKeys[] = {"volume", "mode",     "isovalue",  "camera",
                                              "step",   "transfer", "background"};
// render: on a 3D grid takes the first eight; on a 1D or 2D grid the
// first two, transfer and the last three (the others are refused by name).
constexpr std::string_view kRenderKeys[] = {"every",  "field",  "mode",         "isovalue",
                                            "camera", "step",   "transfer",     "background",
                                            "width",  "height", "interpolation"};
constexpr std::string_view kRender3dOnly[] = {"mode", "isovalue", "camera", "step", "background"};
constexpr std::string_view kInterpolations[] = {"nearest", "bilinear"};
constexpr std::string_view kVolumeKeys[] = {"expr", "sdf", "file"};
constexpr std::string_view kFileKeys[] = {"path", "dataset"};
constexpr std::string_view kCameraKeys[] = {"position", "look_at", "up",
                                            "fov_deg",  "width",   "height"};
constexpr std::string_view kTransferKeys[] = {"colormap", "range", "density"};
constexpr std::string_view kModes[] = {"emission-absorption", "mip", "isosurface"};
constexpr std::string_view kColormaps[] = {"viridis", "inferno", "grayscale", "coolwarm"};
constexpr std::string_view kSdfKinds[] = {"sphere",       "box",        "torus",
                                          "capsule",      "plane",      "union",
                                          "intersection", "difference", "smooth_union"};
constexpr std::string_view kSphereKeys[] = {"center", "radius"};
constexpr std::string_view kBoxKeys[] = {"center", "half"};
constexpr std::string_view kTorusKeys[] = {"center", "major", "minor", "axis"};
constexpr std::string_view kCapsuleKeys[] = {"a", "b", "radius"};
constexpr std::string_view kPlaneKeys[] = {"point", "normal"};
constexpr std::string_view kSmoothKeys[] = {"k", "of"};
// Largest image side: 16384² RGBA floats is 4 GiB already.
constexpr std::int64_t kMaxImageSide = 16384;

using Vec = std::array<double, 3>;

Vec read_vec3(const Value& v) {
  if (!v.node().IsSequence() || v.node().size() != 3)
    v.fail("expected a list of 3 numbers [x, y, z], got " + v.describe());
  const auto items = v.list();
  return {items[0].number(), items[1].number(), items[2].number()};
}

double length(const Vec& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

Vec unit(const Value& v) {
  Vec u = read_vec3(v);
  const double l = length(u);
  if (!(l > 0)) v.fail("expected a direction, got the zero vector");
  for (double& x : u) x /= l;
  return u;
}

Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

std::vector<SdfNode> read_sdf_list(const Value& v);

SdfNode read_sdf_node(const Value& v) {
  if (!v.node().IsMap() || v.node().size() != 1)
    v.fail(
        "expected one primitive or combination, e.g. {sphere: {center: [0.5, 0.5, 0.5], "
        "radius: 0.3}}, got " +
        v.describe());
  const Map outer = v.map(kSdfKinds);
  const std::string kind = outer.keys()[0];
  const Value body = outer.get(kind);
  SdfNode n;
  using K = SdfNode::Kind;
  if (kind == "sphere") {
    const Map m = body.map(kSphereKeys);
    n.kind = K::Sphere;
    n.a = read_vec3(m.require("center"));
    n.r = m.require("radius").positive();
  } else if (kind == "box") {
    const Map m = body.map(kBoxKeys);
    n.kind = K::Box;
    n.a = read_vec3(m.require("center"));
    const Value half = m.require("half");
    n.b = read_vec3(half);
    for (double h : n.b)
      if (!(h > 0)) half.fail(fmt::format("expected half sizes > 0, got {}", h));
  } else if (kind == "torus") {
    const Map m = body.map(kTorusKeys);
    n.kind = K::Torus;
    n.a = read_vec3(m.require("center"));
    n.r = m.require("major").positive();
    n.r2 = m.require("minor").positive();
    n.b = m.has("axis") ? unit(m.get("axis")) : Vec{0, 0, 1};
  } else if (kind == "capsule") {
    const Map m = body.map(kCapsuleKeys);
    n.kind = K::Capsule;
    n.a = read_vec3(m.require("a"));
    n.b = read_vec3(m.require("b"));
    n.r = m.require("radius").positive();
  } else if (kind == "plane") {
    const Map m = body.map(kPlaneKeys);
    n.kind = K::Plane;
    n.a = read_vec3(m.require("point"));
    n.b = unit(m.require("normal"));
  } else if (kind == "smooth_union") {
    const Map m = body.map(kSmoothKeys);
    n.kind = K::SmoothUnion;
    n.k = m.require("k").positive();
    n.children = read_sdf_list(m.require("of"));
  } else {
    n.kind = kind == "union" ? K::Union : kind == "intersection" ? K::Intersection : K::Difference;
    n.children = read_sdf_list(body);
    if (n.kind == K::Difference && n.children.size() < 2)
      body.fail("expected at least 2 shapes: the first minus the others");
  }
  return n;
}

std::vector<SdfNode> read_sdf_list(const Value& v) {
  if (!v.node().IsSequence() || v.node().size() == 0)
    v.fail("expected a non-empty list of shapes, got " +
           (v.node().IsSequence() ? std::string("an empty list") : v.describe()));
  std::vector<SdfNode> out;
  for (const Value& item : v.list()) out.push_back(read_sdf_node(item));
  return out;
}

std::string str_shape(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "]";
}

// A 3D dataset with one value per grid point, [nz][ny][nx] as fields.h5 holds them.
void read_volume_file(const Value& v, const fs::path& base_dir, const Grid& g, RayVolumeSpec& vol) {
  const Map m = v.map(kFileKeys);
  const Value path = m.require("path");
  const Value dataset = m.require("dataset");
  const std::string rel = path.text();
  if (rel.empty()) path.fail("expected a file path, got nothing");
  vol.dataset = dataset.text();
  if (vol.dataset.empty())
    dataset.fail("expected an HDF5 dataset path like /steps/000100/u, got nothing");
  fs::path p(rel);
  if (p.is_relative()) p = base_dir / p;
  p = fs::absolute(p).lexically_normal();
  // First without opening it: a pipe would block the open.
  if (const std::string why = io::input_file_problem(p); !why.empty())
    path.fail(fmt::format("cannot read '{}': {}", p.string(), why));
  if (!std::ifstream(p, std::ios::binary))
    path.fail(fmt::format("cannot read '{}': {}", p.string(), std::strerror(errno)));
  vol.kind = RayVolumeSpec::Kind::File;
  vol.path = p.string();
  std::vector<std::int64_t> shape;
  try {
    shape = io::h5_dataset_shape(vol.path, vol.dataset);
  } catch (const IoError& e) {
    dataset.fail(e.what());
  }
  if (shape.size() != 3)
    dataset.fail(
        fmt::format("dataset '{}' has shape {}: a volume needs a 3D dataset "
                    "[nz][ny][nx]",
                    vol.dataset, str_shape(shape)));
  const std::vector<std::int64_t> want = {g.n[2], g.n[1], g.n[0]};
  if (shape != want)
    dataset.fail(
        fmt::format("dataset '{}' has shape {}; the grid needs {} (slowest axis first): "
                    "set grid.dims to [{}, {}, {}]",
                    vol.dataset, str_shape(shape), str_shape(want), shape[2], shape[1], shape[0]));
}

void read_volume(const Value& v, const Case& c, const fs::path& base_dir, RayVolumeSpec& vol) {
  const Map m = v.map(kVolumeKeys);
  const std::vector<std::string> kinds = m.keys();
  if (kinds.empty()) m.self().fail("missing required key 'expr', 'sdf' or 'file'");
  if (kinds.size() > 1) case_sections::fail_only_one(m, kinds[1], "'expr', 'sdf' and 'file'");
  const Value body = m.get(kinds[0]);
  if (kinds[0] == "expr") {
    const Expr e = body.expr();
    check_expression(e, c.parameters);
    vol.kind = RayVolumeSpec::Kind::Expr;
    vol.expr = e.text;
    vol.expr_loc = e.loc;
  } else if (kinds[0] == "sdf") {
    vol.kind = RayVolumeSpec::Kind::Sdf;
    vol.sdf = read_sdf_list(body);
  } else {
    read_volume_file(body, base_dir, c.grid, vol);
  }
}

void read_camera(const Value& v, const Grid& g, RaySpec& s) {
  const Map m = v.map(kCameraKeys);
  const Value pos = m.require("position");
  s.position = read_vec3(pos);
  s.look_at_auto = !m.has("look_at");
  if (s.look_at_auto)
    for (int a = 0; a < 3; ++a) s.look_at[a] = g.origin[a] + 0.5 * double(g.n[a] - 1) * g.h[a];
  else
    s.look_at = read_vec3(m.get("look_at"));
  // Far enough for any grid gridforge holds, near enough that directions stay finite.
  for (const auto& [key, v] : {std::pair{"position", s.position}, std::pair{"look_at", s.look_at}})
    for (double x : v)
      if (std::fabs(x) > 1e12)
        m.get(key).fail(fmt::format("expected coordinates within ±1e12, got {:g}", x));
  Vec view{s.look_at[0] - s.position[0], s.look_at[1] - s.position[1],
           s.look_at[2] - s.position[2]};
  if (!(length(view) > 0))
    (m.has("look_at") ? m.get("look_at") : pos)
        .fail("the camera's position and look_at are the same point: no view direction");
  const double vl = length(view);
  for (double& x : view) x /= vl;
  const bool has_up = m.has("up");
  const Vec written = has_up ? read_vec3(m.get("up")) : s.up;
  if (has_up) s.up = unit(m.get("up"));
  if (length(cross(view, s.up)) < 1e-6) {
    if (has_up)
      m.get("up").fail(
          fmt::format("up [{:g}, {:g}, {:g}] is parallel to the view direction "
                      "(look_at − position): it cannot say which way is up; choose "
                      "another up",
                      written[0], written[1], written[2]));
    m.self().fail(
        "the default up [0, 0, 1] is parallel to the view direction (look_at − "
        "position); give camera.up");
  }
  if (m.has("fov_deg")) {
    const Value f = m.get("fov_deg");
    s.fov_deg = f.number();
    if (!(s.fov_deg > 0 && s.fov_deg < 180))
      f.fail(fmt::format("expected a vertical field of view in degrees, 0 < fov_deg < 180, got {}",
                         shown(f.node().Scalar())));
  }
  for (const char* side : {"width", "height"}) {
    if (!m.has(side)) continue;
    const Value w = m.get(side);
    const std::int64_t n = w.integer(1);
    if (n > kMaxImageSide)
      w.fail(fmt::format("expected at most {} pixels, got {}", kMaxImageSide, n));
    (std::string_view(side) == "width" ? s.width : s.height) = n;
  }
}

void read_transfer(const Value& v, RaySpec& s) {
  const Map m = v.map(kTransferKeys);
  if (s.ndim < 3 && m.has("density"))
    m.key_node("density").fail(
        fmt::format("applies to 3D grids (the opacity of a ray-marched frame); a {}",
                    s.ndim == 2 ? "2D frame is an opaque image of the field"
                                : "1D frame is a line plot of u against x"));
  if (s.ndim == 1 && m.has("colormap"))
    m.key_node("colormap")
        .fail("applies to 2D and 3D grids; a 1D frame is a line plot of u against x, one colour");
  if (m.has("colormap")) s.colormap = m.get("colormap").choice(kColormaps);
  if (m.has("range")) {
    const Value r = m.get("range");
    if (r.node().IsScalar() && r.node().Scalar() == "auto") {
      s.range_auto = true;
    } else {
      if (!r.node().IsSequence() || r.node().size() != 2)
        r.fail("expected auto or [low, high], got " + r.describe());
      const auto items = r.list();
      s.range_lo = items[0].number();
      s.range_hi = items[1].number();
      if (!(s.range_lo < s.range_hi))
        r.fail(fmt::format("expected low < high, got [{}, {}]", s.range_lo, s.range_hi));
      s.range_auto = false;
    }
  }
  if (m.has("density")) {
    const Value d = m.get("density");
    s.density = d.number();
    if (s.density < 0 || s.density > 1e9)
      d.fail(fmt::format("expected a number from 0 to 1e9, got {}", shown(d.node().Scalar())));
  }
}

// The keys raymarch: and render: share.
void read_common(const Map& m, const Case& c, RaySpec& s) {
  if (m.has("mode")) s.mode = m.get("mode").choice(kModes);
  if (m.has("isovalue")) s.isovalue = m.get("isovalue").number();
  read_camera(m.require("camera"), c.grid, s);
  if (m.has("step")) {
    const Value st = m.get("step");
    s.step = st.positive();
    // Steps per ray grow as 1/step: below 0.01 cell widths a ray costs more than it shows.
    if (s.step < 0.01)
      st.fail(fmt::format("expected at least 0.01 (cell widths), got {}", shown(st.node().Scalar())));
  }
  if (m.has("transfer")) read_transfer(m.get("transfer"), s);
  if (m.has("background")) {
    const Value b = m.get("background");
    s.background = read_vec3(b);
    for (double x : s.background)
      if (!(x >= 0 && x <= 1))
        b.fail(fmt::format("expected colour components in [0, 1], got {}", x));
  }
}

// render.field: the name of one of the fields the case's run writes (pde:
// its fields; every other workload: u alone), as written.
std::string read_frame_field(const Value& v, const Case& c) {
  const std::string name = v.text();
  const std::vector<std::string> fields = output_field_names(c);
  if (std::find(fields.begin(), fields.end(), name) != fields.end()) return name;
  const std::vector<std::string_view> known(fields.begin(), fields.end());
  std::string msg =
      fields.size() == 1
          ? fmt::format("unknown field {}; a {} case has one field, {}", v.describe(),
                        to_string(c.workload), fields[0])
          : fmt::format("unknown field {}; the fields of this case are {}", v.describe(),
                        schema::join(known));
  if (const std::string_view near = schema::nearest(name, known); !near.empty())
    msg += fmt::format("; did you mean '{}'?", near);
  v.fail(msg);
}

std::string dims_entries(const Case& c) {
  return fmt::format("grid.dims has {} entr{}", c.grid.ndim, c.grid.ndim == 1 ? "y" : "ies");
}

}  // namespace

void read_raymarch(const Map& top, const Case& c, const fs::path& base_dir, RaySpec& out) {
  for (const char* other : {"initial", "boundary"})
    if (top.has(other))
      top.key_node(other).fail(
          fmt::format("does not apply to workload raymarch (the volume is raymarch.volume)"));
  if (top.has("render"))
    top.key_node("render").fail(
        "applies to heat, stencil, wave, laplace and pde (a raymarch case renders "
        "its volume itself)");
  if (c.grid.ndim != 3)
    top.require("grid")
        .map(schema::kGridKeys)
        .require("dims")
        .fail(fmt::format("a raymarch volume needs a 3D grid ({})", dims_entries(c)));
  const Map m = top.require("raymarch").map(kRaymarchKeys);
  out.enabled = true;
  read_volume(m.require("volume"), c, base_dir, out.volume);
  read_common(m, c, out);
}

void read_render(const Map& top, const Case& c, RaySpec& out) {
  if (!top.has("render")) return;
  const Map m = top.get("render").map(kRenderKeys);
  out.enabled = true;
  out.ndim = c.grid.ndim;
  out.every = m.require("every").integer(1);
  if (m.has("field")) out.field = read_frame_field(m.get("field"), c);
  if (out.ndim == 3) {
    for (const char* k : {"width", "height", "interpolation"})
      if (m.has(k))
        m.key_node(k).fail(fmt::format("applies to 1D and 2D grids; a 3D frame is ray-marched{}",
                                       std::string_view(k) == "interpolation"
                                           ? ""
                                           : fmt::format(", its size is camera.{}", k)));
    read_common(m, c, out);
    return;
  }
  const char* what = out.ndim == 2 ? "a 2D frame is a colormapped image of the field"
                                   : "a 1D frame is a line plot of u against x";
  for (std::string_view k : kRender3dOnly)
    if (m.has(k))
      m.key_node(k).fail(
          fmt::format("applies to 3D grids (ray-marched frames); {} ({})", what, dims_entries(c)));
  if (m.has("interpolation")) {
    if (out.ndim == 1)
      m.key_node("interpolation")
          .fail(fmt::format("applies to 2D grids; {} ({})", what, dims_entries(c)));
    out.interpolation = m.get("interpolation").choice(kInterpolations);
  }
  if (m.has("transfer")) read_transfer(m.get("transfer"), out);
  // Sizes: given, or one pixel per grid point (2D) scaled up; one side given
  // keeps the other in proportion.
  std::int64_t size[2] = {0, 0};
  for (int a = 0; a < 2; ++a) {
    const char* side = a == 0 ? "width" : "height";
    if (!m.has(side)) continue;
    const Value w = m.get(side);
    size[a] = w.integer(out.ndim == 1 ? 32 : 1);
    if (size[a] > kMaxImageSide)
      w.fail(fmt::format("expected at most {} pixels, got {}", kMaxImageSide, size[a]));
  }
  const auto [w, h] = default_frame_size(out.ndim, c.grid.n[0], c.grid.n[1], size[0], size[1]);
  out.width = w;
  out.height = h;
}

std::pair<std::int64_t, std::int64_t> default_frame_size(int ndim, std::int64_t nx, std::int64_t ny,
                                                         std::int64_t width, std::int64_t height) {
  if (ndim == 1) return {width ? width : 640, height ? height : 360};
  // No size given: each point a k×k block with k the largest that keeps the
  // longer side within 512 pixels (at least 1); a grid over 1024 points on a
  // side is shrunk to 1024 on that side.
  const std::int64_t longest = std::max(nx, ny);
  auto clamp_side = [](double v) {
    return std::clamp<std::int64_t>(std::llround(v), 1, kMaxImageSide);
  };
  if (!width && !height) {
    if (longest > 1024)
      return {clamp_side(double(nx) * 1024 / double(longest)),
              clamp_side(double(ny) * 1024 / double(longest))};
    const std::int64_t k = std::max<std::int64_t>(1, 512 / longest);
    return {nx * k, ny * k};
  }
  if (!height) return {width, clamp_side(double(width) * double(ny) / double(nx))};
  if (!width) return {clamp_side(double(height) * double(nx) / double(ny)), height};
  return {width, height};
}

namespace {

void emit_vec(YAML::Emitter& out, const char* k, const std::array<double, 3>& v) {
  out << YAML::Key << k << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (double x : v) out << fmt::format("{}", x);
  out << YAML::EndSeq;
}

void emit_num(YAML::Emitter& out, const char* k, double v) {
  out << YAML::Key << k << YAML::Value << fmt::format("{}", v);
}

void emit_sdf_list(YAML::Emitter& out, const std::vector<SdfNode>& list);

void emit_sdf_node(YAML::Emitter& out, const SdfNode& n) {
  using K = SdfNode::Kind;
  out << YAML::Flow << YAML::BeginMap;
  switch (n.kind) {
    case K::Sphere:
      out << YAML::Key << "sphere" << YAML::Value << YAML::BeginMap;
      emit_vec(out, "center", n.a);
      emit_num(out, "radius", n.r);
      out << YAML::EndMap;
      break;
    case K::Box:
      out << YAML::Key << "box" << YAML::Value << YAML::BeginMap;
      emit_vec(out, "center", n.a);
      emit_vec(out, "half", n.b);
      out << YAML::EndMap;
      break;
    case K::Torus:
      out << YAML::Key << "torus" << YAML::Value << YAML::BeginMap;
      emit_vec(out, "center", n.a);
      emit_num(out, "major", n.r);
      emit_num(out, "minor", n.r2);
      emit_vec(out, "axis", n.b);
      out << YAML::EndMap;
      break;
    case K::Capsule:
      out << YAML::Key << "capsule" << YAML::Value << YAML::BeginMap;
      emit_vec(out, "a", n.a);
      emit_vec(out, "b", n.b);
      emit_num(out, "radius", n.r);
      out << YAML::EndMap;
      break;
    case K::Plane:
      out << YAML::Key << "plane" << YAML::Value << YAML::BeginMap;
      emit_vec(out, "point", n.a);
      emit_vec(out, "normal", n.b);
      out << YAML::EndMap;
      break;
    case K::SmoothUnion:
      out << YAML::Key << "smooth_union" << YAML::Value << YAML::BeginMap;
      emit_num(out, "k", n.k);
      out << YAML::Key << "of" << YAML::Value;
      emit_sdf_list(out, n.children);
      out << YAML::EndMap;
      break;
    default:
      out << YAML::Key
          << (n.kind == K::Union          ? "union"
              : n.kind == K::Intersection ? "intersection"
                                          : "difference")
          << YAML::Value;
      emit_sdf_list(out, n.children);
  }
  out << YAML::EndMap;
}

void emit_sdf_list(YAML::Emitter& out, const std::vector<SdfNode>& list) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const SdfNode& n : list) emit_sdf_node(out, n);
  out << YAML::EndSeq;
}

}  // namespace

void emit(YAML::Emitter& out, const char* key, const RaySpec& s, bool render) {
  auto vec = [&](const char* k, const std::array<double, 3>& v) {
    out << YAML::Key << k << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double x : v) out << fmt::format("{}", x);
    out << YAML::EndSeq;
  };
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  if (render) out << YAML::Key << "every" << YAML::Value << s.every;
  if (render && !s.field.empty()) out << YAML::Key << "field" << YAML::Value << s.field;
  auto range = [&] {  // transfer.range: auto or [lo, hi]
    out << YAML::Key << "range" << YAML::Value;
    if (s.range_auto)
      out << "auto";
    else
      out << YAML::Flow << YAML::BeginSeq << fmt::format("{}", s.range_lo)
          << fmt::format("{}", s.range_hi) << YAML::EndSeq;
  };
  if (render && s.ndim < 3) {  // a 2D image or a 1D line plot
    out << YAML::Key << "width" << YAML::Value << s.width;
    out << YAML::Key << "height" << YAML::Value << s.height;
    if (s.ndim == 2) out << YAML::Key << "interpolation" << YAML::Value << s.interpolation;
    out << YAML::Key << "transfer" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (s.ndim == 2) out << YAML::Key << "colormap" << YAML::Value << s.colormap;
    range();
    out << YAML::EndMap << YAML::EndMap;
    return;
  }
  if (!render) {
    out << YAML::Key << "volume" << YAML::Value << YAML::BeginMap;
    switch (s.volume.kind) {
      case RayVolumeSpec::Kind::Expr:
        out << YAML::Key << "expr" << YAML::Value << s.volume.expr;
        break;
      case RayVolumeSpec::Kind::Sdf:
        out << YAML::Key << "sdf" << YAML::Value;
        emit_sdf_list(out, s.volume.sdf);
        break;
      case RayVolumeSpec::Kind::File:
        out << YAML::Key << "file" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
            << "path" << YAML::Value << s.volume.path << YAML::Key << "dataset" << YAML::Value
            << s.volume.dataset << YAML::EndMap;
        break;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "mode" << YAML::Value << s.mode;
  out << YAML::Key << "isovalue" << YAML::Value << fmt::format("{}", s.isovalue);
  out << YAML::Key << "camera" << YAML::Value << YAML::BeginMap;
  vec("position", s.position);
  vec("look_at", s.look_at);
  vec("up", s.up);
  out << YAML::Key << "fov_deg" << YAML::Value << fmt::format("{}", s.fov_deg);
  out << YAML::Key << "width" << YAML::Value << s.width;
  out << YAML::Key << "height" << YAML::Value << s.height;
  out << YAML::EndMap;
  out << YAML::Key << "step" << YAML::Value << fmt::format("{}", s.step);
  out << YAML::Key << "transfer" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "colormap" << YAML::Value << s.colormap;
  range();
  out << YAML::Key << "density" << YAML::Value << fmt::format("{}", s.density);
  out << YAML::EndMap;
  vec("background", s.background);
  out << YAML::EndMap;
}

}  // namespace gf::raymarch_case
