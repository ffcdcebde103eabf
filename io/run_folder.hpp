// What a run folder holds: gridforge's outputs (a run owns its folder: a new
// run into a folder of another run is refused unless told to replace it,
// docs/usage.md "One run per folder"), and the run recorded there.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gf::io {

// Where a replacing run keeps the files it replaces until it has started
// (then they go; a run that fails before puts them back).
inline constexpr const char* kReplacedDir = ".gridforge.old";

// The names at the top of `dir` that gridforge runs write (run.json,
// timing.json, log.csv, fields.h5, fields.xdmf, checkpoint.h5, image.h5,
// *.pvd, *.png, vtk/, frames/ and their hidden temporaries), sorted; empty
// when there is none or no folder. Not .gridforge.lock, not validation.json
// (validate's report), not files gridforge does not write.
std::vector<std::string> run_outputs(const std::filesystem::path& dir);

// Of run_outputs(dir), those that say a run was there: not the hidden
// temporaries a killed run may leave (`.<file>.tmp`, which the next run
// overwrites anyway) but `.fields.h5.partial` (its steps); vtk/ and frames/
// when they hold a visible file.
std::vector<std::string> run_evidence(const std::filesystem::path& dir,
                                      const std::vector<std::string>& outputs);

// "run.json, log.csv, vtk/, ..." (at most `most` names).
std::string list_outputs(const std::vector<std::string>& names, std::size_t most = 4);

// The resolved case (YAML text) of the run that `dir`/run.json records;
// nothing when there is no run.json or it holds no case.
std::optional<std::string> recorded_case(const std::filesystem::path& dir);

}  // namespace gf::io
