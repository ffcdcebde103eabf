#include "io/image.hpp"

#include <fmt/format.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGReader.h>
#include <vtkPointData.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/error.hpp"
#include "io/h5.hpp"
#include "io/png_encode.hpp"

namespace gf::io {

namespace {

namespace fs = std::filesystem;

fs::path temp_of(const fs::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp", path.filename().string());
}

void commit(const fs::path& tmp, const fs::path& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

float clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

}  // namespace

namespace {

// The PNG's bytes into path, whole or not at all.
void write_file(const fs::path& path, const std::vector<unsigned char>& png) {
  const fs::path tmp = temp_of(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  bool ok = f && std::fwrite(png.data(), 1, png.size(), f) == png.size();
  int err = errno;
  if (f && std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (!ok) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)));
  }
  commit(tmp, path);
}

}  // namespace

void write_png(const fs::path& path, const Image& img, int level, int threads, PngStats* stats) {
  write_file(path, encode_png(img, level, threads, stats));
}

void write_png(const fs::path& path, const Rgb8Image& img, int level, int threads,
               PngStats* stats) {
  write_file(path, encode_png(img, level, threads, stats));
}

Image read_png(const fs::path& path) {
  vtkNew<vtkPNGReader> reader;
  if (!reader->CanReadFile(path.c_str()))
    throw IoError(fmt::format("cannot read '{}': not a PNG file", path.string()));
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkImageData* data = reader->GetOutput();
  int dims[3];
  data->GetDimensions(dims);
  const int nc = data->GetNumberOfScalarComponents();
  Image img;
  img.width = dims[0];
  img.height = dims[1];
  img.rgba.assign(std::size_t(img.width) * img.height * 4, 1.0f);
  const auto* px = static_cast<const unsigned char*>(data->GetScalarPointer());
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const unsigned char* s = px + std::size_t(nc) * (std::size_t(y) * img.width + x);
      float* d = &img.rgba[4 * (std::size_t(img.height - 1 - y) * img.width + x)];
      for (int c = 0; c < 4 && c < nc; ++c) d[c] = float(s[nc >= 3 ? c : 0]) / 255.0f;
      if (nc < 3) d[1] = d[2] = d[0];
    }
  return img;
}

void write_image_h5(const fs::path& path, const Image& img) {
  using namespace h5;
  const fs::path tmp = temp_of(path);
  try {
    H5Quiet quiet;
    H5Handle file = h5_own(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                           H5Fclose, "cannot create file");
    const std::vector<hsize_t> dims{hsize_t(img.height), hsize_t(img.width), 4};
    H5Handle space =
        h5_own(H5Screate_simple(3, dims.data(), nullptr), H5Sclose, "cannot create dataspace");
    H5Handle ds = h5_own(H5Dcreate2(file.get(), "image", H5T_NATIVE_FLOAT, space.get(), H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
                         H5Dclose, "cannot create dataset '/image'");
    h5_ok(H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, img.rgba.data()),
          "cannot write dataset '/image'");
    h5_attr(ds.get(), "width", std::int64_t(img.width));
    h5_attr(ds.get(), "height", std::int64_t(img.height));
    h5_attr(ds.get(), "layout",
            std::string("RGBA, row 0 the top; RGB over the background, A the coverage"));
    ds.close();
    space.close();
    h5_ok(file.close(), "cannot close file");
  } catch (const H5Failure& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), e.what()));
  }
  commit(tmp, path);
}

ImageDiff compare_images(const Image& test, const Image& ref) {
  ImageDiff d;
  if (test.width != ref.width || test.height != ref.height || test.rgba.size() != ref.rgba.size()) {
    d.mse = d.max_abs = d.off_fraction = 1;
    d.psnr_db = 0;
    return d;
  }
  const std::size_t pixels = std::size_t(ref.width) * ref.height;
  double sum = 0;
  std::size_t off = 0;
  for (std::size_t p = 0; p < pixels; ++p) {
    bool is_off = false;
    for (int c = 0; c < 3; ++c) {
      const float a = test.rgba[4 * p + c], b = ref.rgba[4 * p + c];
      // NaN counts as the largest error.
      const double e =
          std::isnan(a) || std::isnan(b) ? 1.0 : std::fabs(double(clamp01(a)) - clamp01(b));
      sum += e * e;
      d.max_abs = std::max(d.max_abs, e);
      is_off = is_off || e > kOffBy;
    }
    off += is_off;
  }
  d.mse = pixels ? sum / double(3 * pixels) : 0;
  d.psnr_db = d.mse > 0 ? 10 * std::log10(1.0 / d.mse) : std::numeric_limits<double>::infinity();
  d.off_fraction = pixels ? double(off) / double(pixels) : 0;
  d.pass = d.psnr_db >= kMinPsnrDb && d.off_fraction <= kMaxOffFraction;
  return d;
}

}  // namespace gf::io
