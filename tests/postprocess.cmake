# The ParaView check (SPEC §4, "Notes for ParaView"): run a real case with the
# gridforge binary, then open its <name>.pvd and fields.xdmf in pvbatch the
# way a user would (postprocess/paraview_check.py).
#
# This file plays two parts: included from tests/CMakeLists.txt it registers
# the ctest test; run as `cmake -P` by that test it does the work, so the
# steps stay in one place and need no shell.

if(CMAKE_SCRIPT_MODE_FILE)
  # ------------------------------------------------------------ the test
  # Inputs (-D): GRIDFORGE CASE OUT XVFB_RUN PVBATCH SCRIPT ARRAY
  # NP (optional, with MPIRUN): the run over NP MPI ranks, whose .pvd lists
  # .pvti files over per-rank pieces and whose fields.h5 was written collectively.
  # COMPRESSION (optional): output.compression for the run (none, lz4, zlib,
  # with a level), checked in every .vti; H5COMPRESSION (optional):
  # output.hdf5_compression for the run (none, zlib, zlib:L), checked in
  # every dataset of fields.h5 (H5CHECK: the method to check without setting
  # it, e.g. zlib for the default, none over MPI ranks); OVERRIDES (optional,
  # '|'-separated): more KEY=VALUE overrides.
  file(REMOVE_RECURSE "${OUT}")  # stale files from an earlier run would pass
  set(launch "")
  if(NP)
    set(launch "${MPIRUN}" --allow-run-as-root --oversubscribe -np ${NP})
  endif()
  string(REPLACE "|" ";" overrides "${OVERRIDES}")
  set(check_compression "")
  if(COMPRESSION)
    list(APPEND overrides "output.compression=${COMPRESSION}")
    string(REGEX REPLACE ":.*" "" method "${COMPRESSION}")
    set(check_compression --compression ${method})
  endif()
  if(H5COMPRESSION)
    list(APPEND overrides "output.hdf5_compression=${H5COMPRESSION}")
    string(REGEX REPLACE ":.*" "" H5CHECK "${H5COMPRESSION}")
  endif()
  if(H5CHECK)
    list(APPEND check_compression --hdf5-compression ${H5CHECK})
  endif()
  execute_process(
    COMMAND ${launch} "${GRIDFORGE}" run "${CASE}" --device cpu --out "${OUT}" --quiet
            ${overrides}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "paraview_check: '${GRIDFORGE} run ${CASE}' failed (exit ${rc})")
  endif()

  # --out names the run's folder; search below it so that a layout with a
  # per-case subfolder works too.
  file(GLOB_RECURSE pvds "${OUT}/*.pvd")
  list(LENGTH pvds n_pvd)
  if(NOT n_pvd EQUAL 1)
    message(FATAL_ERROR "paraview_check: expected one .pvd under ${OUT}, found ${n_pvd}: ${pvds}")
  endif()
  get_filename_component(run_dir "${pvds}" DIRECTORY)

  # The case decides how many outputs there are; the pvd's count is checked
  # against the xdmf's in pvbatch, and must make a series.
  file(STRINGS "${pvds}" datasets REGEX "<DataSet ")
  list(LENGTH datasets steps)
  if(steps LESS 2)
    message(FATAL_ERROR "paraview_check: ${pvds} lists ${steps} time steps; the case should write a series")
  endif()

  # --range: any finite value passes; NaN or Inf at the last step fails.
  # xvfb-run -a searches for a free display from -n on; a random start keeps
  # two test runs at the same moment (two build trees) off the same display.
  # A check that fails says why in one line starting "paraview_check: FAIL";
  # any other failure is the X server or ParaView starting up (seen once in
  # a while on a loaded 2-core machine: "bad X server connection", twice in a
  # row once, while two builds ran beside the tests; three times in a row
  # once, in a CI run, 2026-11-28) and gets more tries, further apart each
  # time; the X server's own messages (xvfb-run -e) are shown when a try
  # fails, so that the next such failure says why.
  foreach(attempt 1 2 3 4 5)
    if(attempt GREATER 1)
      math(EXPR pause "3 * (${attempt} - 1)")
      execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep ${pause})
    endif()
    string(RANDOM LENGTH 3 ALPHABET 123456789 display)
    set(xvfb_log "${run_dir}/xvfb_${attempt}.log")
    file(REMOVE "${xvfb_log}")
    execute_process(
      COMMAND "${XVFB_RUN}" -a -n ${display} -e "${xvfb_log}" "${PVBATCH}" "${SCRIPT}"
              --pvd "${pvds}" --xdmf "${run_dir}/fields.xdmf" --array "${ARRAY}"
              --steps ${steps} --range -1e300 1e300
              --screenshot "${run_dir}/paraview_check.png" ${check_compression}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    message("${out}${err}")
    if(rc EQUAL 0 OR "${out}${err}" MATCHES "paraview_check: FAIL")
      break()
    endif()
    set(xvfb_said "")
    if(EXISTS "${xvfb_log}")
      file(READ "${xvfb_log}" xvfb_said)
    endif()
    message("paraview_check: pvbatch exited ${rc} without a verdict (attempt ${attempt} of 5); "
            "xvfb-run's X server and xauth said: ${xvfb_said}")
  endforeach()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "paraview_check: pvbatch check failed (exit ${rc})")
  endif()
  if(NOT EXISTS "${run_dir}/paraview_check.png")
    message(FATAL_ERROR "paraview_check: no screenshot at ${run_dir}/paraview_check.png")
  endif()

elseif(GF_PVBATCH AND GF_XVFB_RUN)
  # ------------------------------------------------------- registration
  # pvbatch needs ParaView's Python modules (Debian's python3-paraview).
  # That package conflicts with python3-vtk9, which libvtk9-dev needs, so it
  # may be unpacked aside (dpkg-deb -x) instead: GF_PARAVIEW_PYTHONPATH is
  # the dist-packages folder that holds paraview/simple.py.
  find_path(GF_PARAVIEW_PYTHONPATH NAMES paraview/simple.py
    HINTS ENV GF_PARAVIEW_PYTHONPATH
    PATHS /usr/lib/python3/dist-packages
          ${CMAKE_SOURCE_DIR}/.deps/python3-paraview/usr/lib/python3/dist-packages
          /opt/python3-paraview/usr/lib/python3/dist-packages
    NO_DEFAULT_PATH
    DOC "dist-packages folder with ParaView's Python modules (paraview/simple.py)")
  if(NOT GF_PARAVIEW_PYTHONPATH)
    message(STATUS "gridforge: no 'paraview_check' test: ParaView's Python modules "
                   "(python3-paraview) not found; set GF_PARAVIEW_PYTHONPATH")
  else()
    add_test(NAME paraview_check
      COMMAND ${CMAKE_COMMAND}
              -DGRIDFORGE=$<TARGET_FILE:gridforge>
              -DCASE=${CMAKE_SOURCE_DIR}/cases/heat2d_plate.yaml
              -DOUT=${CMAKE_BINARY_DIR}/pv_out
              -DCOMPRESSION=lz4:9
              -DH5CHECK=none
              -DXVFB_RUN=${GF_XVFB_RUN}
              -DPVBATCH=${GF_PVBATCH}
              -DSCRIPT=${CMAKE_SOURCE_DIR}/postprocess/paraview_check.py
              -DARRAY=u
              -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(paraview_check PROPERTIES
      TIMEOUT 300
      ENVIRONMENT "PYTHONPATH=${GF_PARAVIEW_PYTHONPATH};OMP_NUM_THREADS=2")
    # Each output.compression (cases.md#output) as ParaView 5.11 reads it: a 3D
    # float32 field of several 1 MiB blocks (96·80·72·4 bytes: 2.1 MiB a step),
    # values equal to fields.h5's; the default (lz4:9) is the test above.
    # fields.h5 beside them: uncompressed with none (the default), zlib:6 with
    # zlib:6, zlib:1 with lz4:1.
    foreach(variant none lz4:1 zlib:6)
      string(REPLACE ":" "_" tag "${variant}")
      set(h5variant "${variant}")
      if(variant STREQUAL "lz4:1")
        set(h5variant "zlib:1")
      endif()
      add_test(NAME paraview_check_${tag}
        COMMAND ${CMAKE_COMMAND}
                -DGRIDFORGE=$<TARGET_FILE:gridforge>
                -DCASE=${CMAKE_SOURCE_DIR}/cases/heat3d_hotspot.yaml
                -DOUT=${CMAKE_BINARY_DIR}/pv_out_${tag}
                "-DOVERRIDES=grid.dims=[96,80,72]|heat.steps=40|output.every=20|output.checkpoint_every=0"
                -DCOMPRESSION=${variant}
                -DH5COMPRESSION=${h5variant}
                -DXVFB_RUN=${GF_XVFB_RUN}
                -DPVBATCH=${GF_PVBATCH}
                -DSCRIPT=${CMAKE_SOURCE_DIR}/postprocess/paraview_check.py
                -DARRAY=u
                -P ${CMAKE_CURRENT_LIST_FILE})
      set_tests_properties(paraview_check_${tag} PROPERTIES
        TIMEOUT 300
        ENVIRONMENT "PYTHONPATH=${GF_PARAVIEW_PYTHONPATH};OMP_NUM_THREADS=2")
    endforeach()
    # The README's command as a user types it, with no PYTHONPATH: the script
    # finds `make deps`' unpacked modules itself (issue 25, item 12).
    if(GF_PARAVIEW_PYTHONPATH STREQUAL "${CMAKE_SOURCE_DIR}/.deps/python3-paraview/usr/lib/python3/dist-packages")
      add_test(NAME paraview_check_as_documented
        COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH
                ${GF_XVFB_RUN} -a ${GF_PVBATCH} postprocess/paraview_check.py --help
        WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
      set_tests_properties(paraview_check_as_documented PROPERTIES
        TIMEOUT 120 PASS_REGULAR_EXPRESSION "usage: paraview_check.py")
    endif()
    if(GRIDFORGE_MPI AND GF_MPIEXEC)
      add_test(NAME paraview_check_mpi
        COMMAND ${CMAKE_COMMAND}
                -DGRIDFORGE=$<TARGET_FILE:gridforge>
                -DCASE=${CMAKE_SOURCE_DIR}/cases/heat2d_plate.yaml
                -DOUT=${CMAKE_BINARY_DIR}/pv_out_mpi
                -DMPIRUN=${GF_MPIEXEC} -DNP=3
                -DH5CHECK=none
                -DXVFB_RUN=${GF_XVFB_RUN}
                -DPVBATCH=${GF_PVBATCH}
                -DSCRIPT=${CMAKE_SOURCE_DIR}/postprocess/paraview_check.py
                -DARRAY=u
                -P ${CMAKE_CURRENT_LIST_FILE})
      set_tests_properties(paraview_check_mpi PROPERTIES
        TIMEOUT 300
        ENVIRONMENT "PYTHONPATH=${GF_PARAVIEW_PYTHONPATH};OMP_NUM_THREADS=1")
    endif()
    # One X server at a time: two `xvfb-run -a` started together can take the
    # same display, and pvbatch then aborts on "bad X server connection"
    # (seen under ctest -j2 once there were six of these tests).
    foreach(t paraview_check paraview_check_none paraview_check_lz4_1 paraview_check_zlib_6
              paraview_check_as_documented paraview_check_mpi)
      if(TEST ${t})
        set_tests_properties(${t} PROPERTIES RESOURCE_LOCK xvfb)
        if(t STREQUAL "paraview_check_mpi")
          set_tests_properties(${t} PROPERTIES RESOURCE_LOCK "xvfb;mpi")
        endif()
      endif()
    endforeach()
  endif()
endif()
