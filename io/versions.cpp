#include "io/versions.hpp"

#include <hdf5.h>
#include <vtkVersion.h>

#include <string>

#ifndef GF_YAML_CPP_VERSION
#define GF_YAML_CPP_VERSION "unknown"
#endif

namespace gf::io {

nlohmann::json library_versions() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return {{"hdf5", std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel)},
          {"vtk", vtkVersion::GetVTKVersion()},
          {"yaml-cpp", GF_YAML_CPP_VERSION}};
}

}  // namespace gf::io
