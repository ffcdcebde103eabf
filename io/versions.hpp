#pragma once
#include <nlohmann/json.hpp>

namespace gf::io {
// Versions of the file-format libraries gridforge is linked with.
nlohmann::json library_versions();
}
