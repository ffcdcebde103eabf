# End-to-end tests: the CLI on every case in cases/, and the errors a user
# can make, each with its message, exit code and no output folder left behind.
set(GF_E2E ${CMAKE_CURRENT_LIST_DIR})

file(GLOB GF_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/cases/*.yaml)
foreach(case ${GF_CASES})
  get_filename_component(stem ${case} NAME_WE)
  add_test(NAME "e2e: run ${stem}"
    COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> -DCASE=${case}
            -DOUT=${CMAKE_BINARY_DIR}/e2e/${stem} -DPY=${GF_PYTHON}
            -DCHECK=${GF_E2E}/check_run.py -P ${GF_E2E}/run_case.cmake)
endforeach()

# gf_expect_error(NAME RC REGEX ARGS...): gridforge ARGS exits RC, its stderr
# matches REGEX, and ${CMAKE_BINARY_DIR}/e2e_err/NAME (the --out folder the
# test passes) does not exist afterwards. The message must be one line, except
# for CLI11's usage errors (MULTILINE as the first of ARGS).
function(gf_expect_error name rc regex)
  set(out ${CMAKE_BINARY_DIR}/e2e_err/${name})
  string(REPLACE ";" "|" args "${ARGN}")  # '|' survives the trip through -D
  add_test(NAME "e2e: error ${name}"
    COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> "-DARGS=${args}" -DRC=${rc}
            "-DREGEX=${regex}" -DOUT=${out} -P ${GF_E2E}/expect_error.cmake
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties("e2e: error ${name}" PROPERTIES SKIP_RETURN_CODE 77)
endfunction()

# Every broken case of tests/data/bad_cases/ with the message its first line
# promises (bad_case.sh says how).
file(GLOB GF_BAD_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/data/bad_cases/*.yaml)
foreach(bad ${GF_BAD_CASES})
  get_filename_component(stem ${bad} NAME_WE)
  add_test(NAME "e2e: bad case ${stem}"
    COMMAND bash ${GF_E2E}/bad_case.sh $<TARGET_FILE:gridforge> tests/data/bad_cases/${stem}.yaml
            ${CMAKE_BINARY_DIR}/e2e_bad/${stem}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()

gf_expect_error(override_unknown_key 2 "heat.stpes: unknown key; did you mean 'steps'\\?"
  run cases/heat1d_rod.yaml heat.stpes=10)
gf_expect_error(override_bad_value 2 "heat.alpha: "
  run cases/heat1d_rod.yaml heat.alpha=-1)
gf_expect_error(missing_case_file 2 "no_such_case.yaml"
  run tests/data/bad_cases/no_such_case.yaml)
# Issue 23: a device is refused before it is read (it never ends), as a case
# file and as a checkpoint.
gf_expect_error(case_file_is_a_device 2 "^/dev/zero: cannot read case file: it is not a regular file \\(a device, a pipe or a socket\\)$"
  run /dev/zero --dry-run)
gf_expect_error(restart_from_a_device 2 "^error: --restart: cannot open HDF5 file '/dev/urandom': it is not a regular file \\(a device, a pipe or a socket\\)$"
  run cases/heat1d_rod.yaml --restart /dev/urandom)
# Memory: checked before anything is allocated or written (--dry-run too).
gf_expect_error(host_memory 3 "^error: needs 715 GiB on the host for 3 float32 fields of 4000\\^3 points; [0-9.]+ [GMT]iB free; use a smaller grid$"
  run cases/heat3d_hotspot.yaml --device cpu grid.dims=[4000,4000,4000])
gf_expect_error(host_memory_dry_run 3 "^error: needs 1.4 TiB on the host for 3 float64 fields of 4000\\^3 points; [0-9.]+ [GMT]iB free; use a smaller grid, float32$"
  run cases/heat3d_hotspot.yaml --device cpu --dry-run grid.dims=[4000,4000,4000] precision=float64)
# Memory is checked before the case is prepared: the periodic Poisson case's
# balance check samples f over the whole grid (minutes at 1400^3), and CG's
# message names its matrix (issue 23, item 20).
gf_expect_error(memory_before_prepare 3 "^error: needs [0-9.]+ GiB on the host for 3 float64 fields of 1400\\^3 points, and [0-9.]+ GiB for the spectra and the FFT library's work space; [0-9.]+ [GMT]iB free; use a smaller grid, float32$"
  run cases/poisson3d_periodic.yaml --device cpu grid.dims=[1400,1400,1400])
set_tests_properties("e2e: error memory_before_prepare" PROPERTIES TIMEOUT 20)
gf_expect_error(memory_names_the_matrix 3 "^error: needs [0-9.]+ GiB on the host for 6 float64 fields of 1300\\^3 points, and [0-9.]+ GiB for the operator's sparse \\(CSR\\) matrix; "
  run cases/laplace3d_box.yaml --device cpu grid.dims=[1300,1300,1300] laplace.operator=csr)
gf_expect_error(bad_device_name 2 "--device: 'gpu' is not one of auto, cpu, cuda, cuda:N"
  run cases/heat1d_rod.yaml --device gpu)
gf_expect_error(device_number_too_large 2 "^error: --device cuda:99999999999999999999: GPU number 99999999999999999999 is out of range \\(cuda:0 is the first GPU\\)$"
  run cases/heat1d_rod.yaml --dry-run --device cuda:99999999999999999999)
gf_expect_error(bad_command_line 2 "^error: run needs a case file: gridforge run CASE.yaml \\[KEY=VALUE \\.\\.\\.\\], e\\.g\\. gridforge run cases/heat1d_rod\\.yaml --device cpu \\(gridforge run --help for the options\\)$"
  run)
# Issue 25, item 5: typos of commands, options and device names get a suggestion.
gf_expect_error(unknown_command 2 "^error: unknown command 'rnu'; did you mean 'run'\\?$"
  rnu cases/heat1d_rod.yaml)
gf_expect_error(unknown_option 2 "^error: gridforge run: unknown option '--devcie'; did you mean '--device'\\?$"
  run cases/heat1d_rod.yaml --devcie cpu)
gf_expect_error(device_gpu 2 "^error: --device: 'gpu' is not one of auto, cpu, cuda, cuda:N; use cuda or cuda:N$"
  run cases/heat1d_rod.yaml --device gpu)
# laplace and implicit heat
gf_expect_error(fft_without_periodic_axes 2 "^command line: laplace.method: fft needs every axis periodic \\(the FFT solve is periodic\\); boundary x- is dirichlet"
  run cases/laplace2d_plate.yaml laplace.method=fft)
gf_expect_error(nonzero_mean_periodic 2 "^command line: laplace.rhs: the right-hand side has mean 1, not 0: with every face periodic .* set laplace.remove_mean: true"
  run cases/poisson3d_periodic.yaml laplace.rhs=1)
gf_expect_error(negative_tolerance 2 "^command line: laplace.tolerance: expected a number > 0, got -1"
  run cases/laplace3d_box.yaml laplace.tolerance=-1)
gf_expect_error(omega_out_of_range 2 "^command line: laplace.omega: expected auto or a number in \\(0, 2\\), got '2.5'"
  run cases/laplace2d_plate.yaml laplace.method=sor laplace.omega=2.5)
gf_expect_error(implicit_dt_auto 2 "^cases/heat3d_hotspot.yaml:[0-9]+:[0-9]+: heat.dt: scheme implicit needs a number for dt"
  run cases/heat3d_hotspot.yaml heat.scheme=implicit)
add_test(NAME "e2e: laplace not converging exits 1 and writes the last iterate"
  COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> -DCASE=${CMAKE_SOURCE_DIR}/cases/laplace2d_plate.yaml
          -DOUT=${CMAKE_BINARY_DIR}/e2e_not_converged -P ${GF_E2E}/not_converged.cmake)

add_test(NAME "e2e: a float32 laplace solve at its rounding floor stops, exits 1 and says why"
  COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> -DCASE=${CMAKE_SOURCE_DIR}/cases/laplace2d_plate.yaml
          -DOUT=${CMAKE_BINARY_DIR}/e2e_stalled -P ${GF_E2E}/stalled.cmake)

# Only meaningful where there is no GPU (CI); skipped (77) where there is one.
gf_expect_error(device_cuda_without_gpu 3 "--device cuda: no usable GPU: .*; use --device cpu"
  NO_GPU run cases/heat1d_rod.yaml --device cuda)
gf_expect_error(validate_without_gpu 3 "validate compares the CPU with the GPU and needs a usable GPU"
  NO_GPU validate cases/heat1d_rod.yaml)

add_test(NAME "e2e: dry-run writes nothing"
  COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> -DCASE=${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml
          -DOUT=${CMAKE_BINARY_DIR}/e2e_dry -P ${GF_E2E}/dry_run.cmake)

add_test(NAME "e2e: SIGINT writes the state reached and exits 130"
  COMMAND bash ${GF_E2E}/interrupt.sh $<TARGET_FILE:gridforge>
          ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_interrupt)

add_test(NAME "e2e: a second SIGINT exits at once"
  COMMAND bash ${GF_E2E}/interrupt_twice.sh $<TARGET_FILE:gridforge>
          ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_interrupt_twice)

add_test(NAME "e2e: progress follows a solve's residual"
  COMMAND bash ${GF_E2E}/progress.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
          ${CMAKE_BINARY_DIR}/e2e_progress)

add_test(NAME "e2e: a closed stderr pipe, SIGINT on output steps and in a render"
  COMMAND bash ${GF_E2E}/signals.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
          ${CMAKE_BINARY_DIR}/e2e_signals)

add_test(NAME "e2e: divergence stops the run at the next check and keeps the outputs"
  COMMAND bash ${GF_E2E}/diverge.sh $<TARGET_FILE:gridforge>
          ${CMAKE_SOURCE_DIR}/tests/data/cases/diverge.yaml ${CMAKE_BINARY_DIR}/e2e_diverge ${GF_PYTHON})

add_test(NAME "e2e: unwritable output folder and full disk are exit 1 with the path"
  COMMAND bash ${GF_E2E}/io_errors.sh $<TARGET_FILE:gridforge>
          ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_io_errors ${GF_PYTHON})

# Outputs are written by a background thread by default; the same failures
# with them written in turn by the time loop (GRIDFORGE_SYNC_OUTPUT=1).
add_test(NAME "e2e: unwritable output folder and full disk, outputs written in turn"
  COMMAND bash ${GF_E2E}/io_errors.sh $<TARGET_FILE:gridforge>
          ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_io_errors_sync ${GF_PYTHON})
add_test(NAME "e2e: divergence keeps the outputs, outputs written in turn"
  COMMAND bash ${GF_E2E}/diverge.sh $<TARGET_FILE:gridforge>
          ${CMAKE_SOURCE_DIR}/tests/data/cases/diverge.yaml ${CMAKE_BINARY_DIR}/e2e_diverge_sync ${GF_PYTHON})
set_tests_properties("e2e: unwritable output folder and full disk, outputs written in turn"
  "e2e: divergence keeps the outputs, outputs written in turn"
  PROPERTIES ENVIRONMENT "GRIDFORGE_SYNC_OUTPUT=1")
if(GF_PYTHON)
  add_test(NAME "e2e: the background writer writes the same files as the time loop"
    COMMAND bash ${GF_E2E}/output_overlap.sh $<TARGET_FILE:gridforge>
            ${CMAKE_BINARY_DIR}/e2e_output_overlap ${GF_PYTHON}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endif()

# ulimit -v and AddressSanitizer's shadow memory do not mix.
if(NOT GRIDFORGE_SANITIZE)
  add_test(NAME "e2e: a failed host allocation is exit 3 saying what and how much"
    COMMAND bash ${GF_E2E}/host_oom.sh $<TARGET_FILE:gridforge>
            ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_host_oom)
endif()

if(GF_PYTHON)
  add_test(NAME "e2e: SIGKILL during outputs leaves only whole files"
    COMMAND bash ${GF_E2E}/sigkill.sh $<TARGET_FILE:gridforge>
            ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_sigkill ${GF_PYTHON})
endif()

# postprocess/whole_run.py (issue 20, item 3) on the CPU, CuPy's peer skipped.
if(GF_PYTHON)
  add_test(NAME "e2e: whole_run.py times whole runs beside the disk, the peer skipped"
    COMMAND bash ${GF_E2E}/whole_run.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/e2e_whole_run ${GF_PYTHON})
  set_tests_properties("e2e: whole_run.py times whole runs beside the disk, the peer skipped"
    PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
endif()

# Refused runs change nothing in the output folder (issue 23): a second run
# into a folder in use, a restart of a series that cannot be continued, case
# errors found while setting up; and the messages of a few refusals.
if(GF_PYTHON)
  foreach(mode lock restart case_error messages)
    add_test(NAME "e2e: refused ${mode} changes nothing"
      COMMAND bash ${GF_E2E}/refusals.sh $<TARGET_FILE:gridforge>
              ${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml ${CMAKE_BINARY_DIR}/e2e_refusals/${mode}
              ${GF_PYTHON} ${mode})
  endforeach()
endif()

# bench: tiny sizes on the CPU; its files checked against each other and SPEC,
# then plotted; and the command-line errors.
add_test(NAME "e2e: bench on the CPU writes the table, bench.json and bench.csv"
  COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> -DOUT=${CMAKE_BINARY_DIR}/e2e_bench
          -DPY=${GF_PYTHON} -DCHECK=${GF_E2E}/check_bench.py -P ${GF_E2E}/bench.cmake)
set_tests_properties("e2e: bench on the CPU writes the table, bench.json and bench.csv"
  PROPERTIES FIXTURES_SETUP bench_json ENVIRONMENT "OMP_NUM_THREADS=2")
# bench --workload poisson (issue 22): time to solution, a row a method; plotted
# too when matplotlib is there (the test looks for it below).
set(_poisson_plot "")
set(_plot_ok 1)
if(GF_PYTHON)
  execute_process(COMMAND ${GF_PYTHON} -c "import matplotlib" RESULT_VARIABLE _plot_ok
                  OUTPUT_QUIET ERROR_QUIET)
endif()
if(_plot_ok EQUAL 0)
  add_test(NAME "e2e: plot_bench.py draws two PNGs per workload, for cubes, shapes and an old bench.json"
    COMMAND ${CMAKE_COMMAND} -DPY=${GF_PYTHON} -DPLOT=${CMAKE_SOURCE_DIR}/postprocess/plot_bench.py
            -DJSON=${CMAKE_BINARY_DIR}/e2e_bench/bench.json -DOUT=${CMAKE_BINARY_DIR}/e2e_bench/plots
            -DOLD=${CMAKE_SOURCE_DIR}/docs/data/bench_h200.json -P ${GF_E2E}/plot_bench.cmake)
  set_tests_properties("e2e: plot_bench.py draws two PNGs per workload, for cubes, shapes and an old bench.json"
    PROPERTIES FIXTURES_REQUIRED bench_json LABELS walkthrough)
  # postprocess/plot.py on 1D, 2D and 3D runs' fields.h5, and its errors.
  add_test(NAME "e2e: plot.py plots a line, an image, a slice of fields.h5"
    COMMAND bash ${GF_E2E}/plot_fields.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/e2e_plot_fields ${GF_PYTHON})
  set_tests_properties("e2e: plot.py plots a line, an image, a slice of fields.h5"
    PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2" LABELS walkthrough)
  set(_poisson_plot -DPLOT=${CMAKE_SOURCE_DIR}/postprocess/plot_bench.py)
else()
  message(STATUS "gridforge: no plot_bench or plot.py test: matplotlib not found for ${GF_PYTHON}")
endif()
add_test(NAME "e2e: bench --workload poisson solves with every method, and the time limit ends a row"
  COMMAND ${CMAKE_COMMAND} -DGF=$<TARGET_FILE:gridforge> -DOUT=${CMAKE_BINARY_DIR}/e2e_bench_poisson
          -DPY=${GF_PYTHON} -DCHECK=${GF_E2E}/check_bench.py ${_poisson_plot}
          -P ${GF_E2E}/bench_poisson.cmake)
set_tests_properties("e2e: bench --workload poisson solves with every method, and the time limit ends a row"
  PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
gf_expect_error(bench_unknown_method 2 "^error: --methods: 'multigird' is not one of jacobi, sor, cg, cg-jacobi, cg-multigrid, multigrid, multigrid-f, multigrid-mixed, fft; did you mean 'multigrid'\\?$"
  bench --workload poisson --methods cg,multigird --devices cpu)
gf_expect_error(bench_method_twice 2 "^error: --methods: 'cg' is named twice$"
  bench --workload poisson --methods cg,sor,cg --devices cpu)
gf_expect_error(bench_bad_max_seconds 2 "^error: --max-seconds: 0 is not a number of seconds > 0$"
  bench --workload poisson --max-seconds 0 --devices cpu)
gf_expect_error(bench_bad_tolerance 2 "^error: --tolerance: 2 is not a relative residual in \\(0, 1\\)$"
  bench --workload poisson --tolerance 2 --devices cpu)
gf_expect_error(bench_unknown_workload 2 "^error: --workload: 'waves' is not one of heat, laplace, stencil, wave, pde, poisson, raymarch, all$"
  bench --workload heat,waves --devices cpu)
gf_expect_error(bench_bad_sizes 2 "^error: --sizes: 'x64' is not N or NXxNYxNZ \\(NXxNY in 2D\\), whole numbers of points per axis, e.g. 512 or 509x263x391$"
  bench --sizes 32,x64 --devices cpu)
gf_expect_error(bench_size_too_small 2 "^error: --sizes: 3 is too small; sizes are at least 5 points$"
  bench --sizes 3 --devices cpu)
# Issue 21: non-cubic sizes, NXxNYxNZ (3D) or NXxNY (2D); each entry's errors name it.
gf_expect_error(bench_shape_four_axes 2 "^error: --sizes: '9x9x9x9' is not N or NXxNYxNZ \\(NXxNY in 2D\\), whole numbers of points per axis, e.g. 512 or 509x263x391$"
  bench --sizes 16,9x9x9x9 --devices cpu)
gf_expect_error(bench_shape_empty_axis 2 "^error: --sizes: '509xx391' is not N or NXxNYxNZ \\(NXxNY in 2D\\), whole numbers of points per axis, e.g. 512 or 509x263x391$"
  bench --sizes 509xx391 --devices cpu)
gf_expect_error(bench_shape_garbage_axis 2 "^error: --sizes: '509x263xabc' is not N or NXxNYxNZ \\(NXxNY in 2D\\), whole numbers of points per axis, e.g. 512 or 509x263x391$"
  bench --sizes 509x263xabc --devices cpu)
gf_expect_error(bench_shape_zero_axis 2 "^error: --sizes: 509x0x391 has 0 points along y; sizes are at least 5 points per axis$"
  bench --sizes 509x0x391 --devices cpu)
gf_expect_error(bench_shape_axis_too_small 2 "^error: --sizes: 16x16x4 has 4 points along z; sizes are at least 5 points per axis$"
  bench --sizes 16,16x16x4 --devices cpu)
gf_expect_error(bench_shape_3_axes_in_2d 2 "^error: --sizes: 509x263x391 has 3 axes; --dims 2 takes N or NXxNY$"
  bench --dims 2 --sizes 64,509x263x391 --devices cpu)
gf_expect_error(bench_shape_2_axes_in_3d 2 "^error: --sizes: 16385x1025 has 2 axes; --dims 3 takes N or NXxNYxNZ$"
  bench --dims 2,3 --sizes 16385x1025 --devices cpu)
gf_expect_error(bench_shape_too_many_points 2 "^error: --sizes: 9999999x9999999 is more than 2\\^40 points$"
  bench --dims 2 --sizes 9999999x9999999 --devices cpu)
gf_expect_error(bench_cube_too_many_points 2 "^error: --sizes: 20000\\^3 is more than 2\\^40 points$"
  bench --sizes 20000 --devices cpu)
gf_expect_error(bench_bad_time_block 2 "^error: --time-block: 'x' is not a whole number of steps from 1 to 8$"
  bench --time-block 1,x --devices cpu)
gf_expect_error(time_block_raymarch 2 "^error: --time-block: temporal blocking is for heat, stencil and laplace cases; cases/raymarch_cloud.yaml is a raymarch case$"
  run cases/raymarch_cloud.yaml --time-block 2)
gf_expect_error(time_block_not_jacobi 2 "^command line: laplace.time_block: temporal blocking is for the jacobi method, not cg$"
  run cases/laplace3d_box.yaml --time-block 2)
gf_expect_error(time_block_not_star7 2 "^command line: stencil.time_block: temporal blocking is for stars of radius 1 in 2D or 3D \\(star5 or star7, or points in their order: centre, -x, \\+x, -y, \\+y, and in 3D -z, \\+z\\)$"
  run cases/stencil2d_star9.yaml --time-block 2)
gf_expect_error(time_block_bad_value 2 "^command line: heat.time_block: expected auto or a whole number of steps from 1 to 8, got 'zero'$"
  run cases/heat3d_hotspot.yaml --time-block zero)
gf_expect_error(bench_bad_precision 2 "^error: --precision: 'float16' is not float32 or float64$"
  bench --precision float16 --devices cpu)
gf_expect_error(bench_stencil_wrong_dims 2 "^error: --stencil star7: star7 is a 3D stencil; the grid is 2D$"
  bench --workload stencil --dims 2 --stencil star7 --devices cpu)
gf_expect_error(bench_cuda_without_gpu 3 "^error: --device cuda: no usable GPU: .*; use --device cpu$"
  NO_GPU bench --device cpu,cuda)
gf_expect_error(bench_devices_alias_without_gpu 3 "^error: --device cuda: no usable GPU: .*; use --device cpu$"
  NO_GPU bench --devices cpu,cuda)

# Issue 25 (first_hour.sh says what each mode checks): typos and help, --device
# on every command, --json on run, validate and bench, a dry run that does not
# fit said once; gridforge compare and the missing-dataset hint.
if(GF_PYTHON)
  foreach(mode typos device json memory compare summary)
    add_test(NAME "e2e: first hour ${mode}"
      COMMAND bash ${GF_E2E}/first_hour.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
              ${CMAKE_BINARY_DIR}/e2e_first_hour/${mode} ${GF_PYTHON} ${mode})
    set_tests_properties("e2e: first hour ${mode}" PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
  endforeach()
endif()

# Issue 25, items 2-4 (run_folder.sh says what each mode checks): a run owns
# its folder (--overwrite), a restart needs only its checkpoint and says how
# to resume, a restart into another run's folder is refused at once.
if(GF_PYTHON)
  foreach(mode overwrite setup_failure make_run restart_alone restart_folder)
    add_test(NAME "e2e: run folder ${mode}"
      COMMAND bash ${GF_E2E}/run_folder.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
              ${CMAKE_BINARY_DIR}/e2e_run_folder/${mode} ${GF_PYTHON} ${mode})
    # ulimit -v and AddressSanitizer's shadow memory do not mix (as host_oom above)
    if(GRIDFORGE_SANITIZE)
      set_tests_properties("e2e: run folder ${mode}" PROPERTIES ENVIRONMENT "GF_SANITIZE=1")
    endif()
  endforeach()
endif()

# The pde workload's Gray–Scott against the same scheme in NumPy (issue 27).
if(GF_PYTHON)
  add_test(NAME "e2e: pde grayscott against numpy"
    COMMAND ${GF_PYTHON} ${GF_E2E}/grayscott_numpy.py $<TARGET_FILE:gridforge>
            ${CMAKE_BINARY_DIR}/e2e/grayscott_numpy
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endif()

# Checkpoint and restart (restart.py says what each mode checks): bit for bit
# against uninterrupted runs, the logs and series continued, refusals.
if(GF_PYTHON)
  foreach(mode heat_explicit heat_cn stencil wave pde laplace_jacobi laplace_cg laplace_multigrid laplace_pcg interrupt interrupt_laplace diverge mismatch)
    add_test(NAME "e2e: restart ${mode}"
      COMMAND ${GF_PYTHON} ${GF_E2E}/restart.py $<TARGET_FILE:gridforge> ${mode}
              ${CMAKE_BINARY_DIR}/e2e_restart/${mode}
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  endforeach()
endif()

# MPI (issue 8): runs under `mpirun -np 2, 3, 4` (oversubscribed, as root)
# against the one-rank run, bit for bit where the arithmetic is the same;
# mpi.py says what each mode checks.
if(GRIDFORGE_MPI AND GF_PYTHON AND GF_MPIEXEC)
  foreach(mode heat2d wave heat3d_periodic stencil_box27 stencil_radius2 jacobi sor cg heat_implicit multigrid overlap time_block render files pde restart errors interrupt)
    add_test(NAME "e2e: mpi ${mode}"
      COMMAND ${GF_PYTHON} ${GF_E2E}/mpi.py $<TARGET_FILE:gridforge> ${mode}
              ${CMAKE_BINARY_DIR}/e2e_mpi/${mode}
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    # one MPI test at a time: its ranks already oversubscribe a 2-core CI
    # machine, and two together starved a 3-rank restart past its 300 s
    set_tests_properties("e2e: mpi ${mode}" PROPERTIES
      ENVIRONMENT "GF_MPIRUN=${GF_MPIEXEC}" TIMEOUT 600 RESOURCE_LOCK mpi)
  endforeach()
  # An error one rank finds alone while setting up stops every rank alike
  # (exit 2, one message, the folder as before), none waiting for ever.
  add_test(NAME "e2e: mpi rank_errors"
    COMMAND ${GF_PYTHON} ${GF_E2E}/mpi_rank_errors.py $<TARGET_FILE:gridforge>
            ${CMAKE_BINARY_DIR}/e2e_mpi/rank_errors
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties("e2e: mpi rank_errors" PROPERTIES
    ENVIRONMENT "GF_MPIRUN=${GF_MPIEXEC}" TIMEOUT 300 RESOURCE_LOCK mpi)
endif()

# The README's "Your first case", taken from README.md and followed as a new
# user would (issue 25): run, override, look, typo, compare, Ctrl-C and the
# printed resume command, a second run into the folder.
if(GF_PYTHON)
  add_test(NAME "e2e: README your first case"
    COMMAND bash ${GF_E2E}/readme_first_case.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/e2e_readme ${GF_PYTHON})
  # Label `walkthrough`: tests that replay a user's session over code the
  # other tests run too, or mostly Python; `make test` leaves them out of the
  # sanitizer tree (Makefile, test-asan), where they cost 90 s of CI's 30 min.
  set_tests_properties("e2e: README your first case" PROPERTIES LABELS walkthrough)
endif()

# Issue 25, item 9 (shared_machine.py says what each mode checks): --threads on
# every command, threads fed by the grid, time_block auto that times nothing
# where it cannot pay, and a rod that keeps one thread beside two busy processes.
if(GF_PYTHON)
  foreach(mode threads tuning busy)
    add_test(NAME "e2e: shared machine ${mode}"
      COMMAND ${GF_PYTHON} ${GF_E2E}/shared_machine.py $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}
              ${CMAKE_BINARY_DIR}/e2e_shared_machine/${mode} ${mode})
  endforeach()
  set_tests_properties("e2e: shared machine busy" PROPERTIES RUN_SERIAL TRUE)
  set_tests_properties("e2e: shared machine threads" "e2e: shared machine tuning" PROPERTIES
    LABELS walkthrough)
endif()

# Issue 26: the GPU ray marcher's GRIDFORGE_RM_* are checked on every path too.
add_test(NAME "e2e: a bad GRIDFORGE_RM_BRICK or GRIDFORGE_RM_TILE is exit 2 before anything is written"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/raymarch_cloud.yaml ${CMAKE_BINARY_DIR}/e2e_rm_env
                 bad GRIDFORGE_RM_BRICK=12 "GRIDFORGE_RM_BRICK='12': give the bricks' edge in cells, a power of two from 4 to 64"
                 bad GRIDFORGE_RM_TILE=64x64 "GRIDFORGE_RM_TILE='64x64': give WxH pixels a block")

# Issue 21: GRIDFORGE_ROW_ALIGN (the GPU's row alignment) is checked on every
# path: a value that is not 0 or a power of two from 16 to 4096 is exit 2,
# named, before anything is written (the CPU path too, where it has no use).
add_test(NAME "e2e: a bad GRIDFORGE_ROW_ALIGN is exit 2 before anything is written"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_row_align
                 bad GRIDFORGE_ROW_ALIGN=24 "GRIDFORGE_ROW_ALIGN='24': give 0 (dense rows) or a power of two from 16 to 4096")
add_test(NAME "e2e: a bad GRIDFORGE_PDL is exit 2 before anything is written; early and late run"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_pdl
                 bad GRIDFORGE_PDL=yes "GRIDFORGE_PDL='yes': give 1 (dependent launches by the field's size, the default), 0 (ordinary launches), early or late"
                 good GRIDFORGE_PDL=late good GRIDFORGE_PDL=early)
add_test(NAME "e2e: a bad GRIDFORGE_MARCH_TAIL or GRIDFORGE_PAD_STORE is exit 2 before anything is written; good ones run"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_tail_env
                 bad GRIDFORGE_MARCH_TAIL=32 "GRIDFORGE_MARCH_TAIL='32': give 0 (no tail blocks) or 1 to 31"
                 bad GRIDFORGE_PAD_STORE=yes "GRIDFORGE_PAD_STORE='yes': give 1 (whole sectors) or 0"
                 good "GRIDFORGE_MARCH_TAIL=0 GRIDFORGE_PAD_STORE=0")
add_test(NAME "e2e: a bad GRIDFORGE_MARCH_ORDER is exit 2 before anything is written; good ones run"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_march_order
                 bad GRIDFORGE_MARCH_ORDER=2 "GRIDFORGE_MARCH_ORDER='2': give 1 (every other step from the other end, the default) or 0 (always up)"
                 good GRIDFORGE_MARCH_ORDER=0 good GRIDFORGE_MARCH_ORDER=1)
add_test(NAME "e2e: a bad GRIDFORGE_PDE_BLOCKS is exit 2 before anything is written; a good one runs"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_pde_blocks
                 bad GRIDFORGE_PDE_BLOCKS=9 "GRIDFORGE_PDE_BLOCKS='9': give 1 to 8 blocks an SM"
                 bad GRIDFORGE_PDE_BLOCKS=0 "GRIDFORGE_PDE_BLOCKS='0': give 1 to 8 blocks an SM"
                 good GRIDFORGE_PDE_BLOCKS=4)
add_test(NAME "e2e: a bad GRIDFORGE_PDE_PREFETCH is exit 2 before anything is written; good ones run"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_pde_prefetch
                 bad GRIDFORGE_PDE_PREFETCH=2 "GRIDFORGE_PDE_PREFETCH='2': give 1 (ask L2 for the plane after the next) or 0"
                 good GRIDFORGE_PDE_PREFETCH=0 good GRIDFORGE_PDE_PREFETCH=1)
add_test(NAME "e2e: a bad GRIDFORGE_MARCH_CHUNK or GRIDFORGE_MARCH_PIECES is exit 2 before anything is written"
         COMMAND bash ${GF_E2E}/env_knobs.sh $<TARGET_FILE:gridforge> ${CMAKE_SOURCE_DIR}/cases/heat1d_rod.yaml ${CMAKE_BINARY_DIR}/e2e_march_env
                 bad GRIDFORGE_MARCH_CHUNK=65 "GRIDFORGE_MARCH_CHUNK='65': give 0 (by the grid) or 1 to 64"
                 bad GRIDFORGE_MARCH_PIECES=16 "GRIDFORGE_MARCH_PIECES='16': give 32")
