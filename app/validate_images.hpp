// validate for images (SPEC §2): a raymarch case's image, and the in-situ
// frames of a heat or stencil case, rendered on the CPU and on the GPU and
// compared by PSNR and the fraction of pixels off by more than 2/255.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "kernels/backend.hpp"

namespace gf::app {

// Renders the raymarch case on both backends; prints the table row and
// returns the validation.json record ("pass" says whether it passed).
template <class T>
nlohmann::json validate_raymarch(const Case& c, Backend<T>& cpu, Backend<T>& gpu);

// Prints a table of the rows validate_frame returned.
void print_frame_rows(const nlohmann::json& rows);
// One in-situ frame: the CPU's and the GPU's fields at `step`, each rendered
// where it lives (with the CPU field's range when the range is auto); returns
// its validation.json row.
template <class T>
nlohmann::json validate_frame(const Case& c, std::int64_t step, Backend<T>& cpu,
                              const Field<T>& cpu_field, Backend<T>& gpu,
                              const Field<T>& gpu_field);

}  // namespace gf::app
