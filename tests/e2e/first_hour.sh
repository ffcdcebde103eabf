#!/usr/bin/env bash
# Issue 25: what a new user meets in the first hour, one mode a test.
#   typos   commands and options mistyped: a suggestion; help, -V
#   device  --device on every command (a comma list for bench; --devices too)
#   json    --json on run (dry run, failures), validate and bench; --help examples
#   memory  a dry run that does not fit says it once
#   summary a solve's last line: fft is a direct solve, "1 iteration"
#   compare gridforge compare of two runs (same, different, other steps,
#           not a run); a missing dataset lists what the file holds; a
#           raymarch of a run's fields.h5 takes its grid from the file
# Usage: first_hour.sh GRIDFORGE SOURCE_DIR OUT PYTHON MODE
set -u
gf=$1 src=$2 out=$3 py=$4 mode=$5
cd "$src" || exit 1
fail() { echo "first_hour $mode: FAIL: $*"; exit 1; }
rm -rf "$out" && mkdir -p "$out"
# run ARGS...: sets rc, o (stdout), e (stderr)
run() { "$gf" "$@" >"$out/o" 2>"$out/e"; rc=$?; o=$(cat "$out/o"); e=$(cat "$out/e"); }
expect() {  # expect RC STDERR_EXACT
  [ "$rc" = "$1" ] || fail "exit $rc, expected $1 (stderr: $e)"
  [ "$e" = "$2" ] || fail "stderr '$e', expected '$2'"
}
# json_get FILE EXPR: python expression over j, printed
json_get() { "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); print(($2,))" "$1"; }
case=cases/heat1d_rod.yaml
case $mode in
typos)
  run rnu $case; expect 2 "error: unknown command 'rnu'; did you mean 'run'?"
  run valdiate $case; expect 2 "error: unknown command 'valdiate'; did you mean 'validate'?"
  run help; expect 0 ""
  [[ "$o" == *"Usage: gridforge [OPTIONS] SUBCOMMAND"* ]] || fail "gridforge help: $o"
  run help run; expect 0 ""
  [[ "$o" == *"Usage: gridforge run [OPTIONS] [case]"* ]] || fail "gridforge help run: $o"
  run --version; v=$o; expect 0 ""
  run -V; expect 0 ""
  [ -n "$v" ] && [ "$o" = "$v" ] || fail "-V printed '$o', --version '$v'"
  run run $case --devcie cpu --out "$out/x"
  expect 2 "error: gridforge run: unknown option '--devcie'; did you mean '--device'?"
  run bench --sizes 8 --stensil star7 --out "$out/x"
  expect 2 "error: gridforge bench: unknown option '--stensil'; did you mean '--stencil'?"
  run validate $case --rtl=1e-3
  expect 2 "error: gridforge validate: unknown option '--rtl'; did you mean '--rtol'?"
  run --verison; expect 2 "error: gridforge: unknown option '--verison'; did you mean '--version'?"
  run run $case --device gpu --out "$out/x"
  expect 2 "error: --device: 'gpu' is not one of auto, cpu, cuda, cuda:N; use cuda or cuda:N"
  run run $case --device cdua --out "$out/x"
  expect 2 "error: --device: 'cdua' is not one of auto, cpu, cuda, cuda:N; did you mean 'cuda'?"
  run run; expect 2 "error: run needs a case file: gridforge run CASE.yaml [KEY=VALUE ...], e.g. gridforge run cases/heat1d_rod.yaml --device cpu (gridforge run --help for the options)"
  [ ! -e "$out/x" ] || fail "$out/x was created"
  ;;
device)
  # --device for bench, a comma list; --devices still works; the same messages
  for opt in --device --devices; do
    run bench $opt cpu --sizes 8 --steps 1 --repeat 1 --quiet --out "$out/b$opt"
    [ "$rc" = 0 ] || fail "bench $opt cpu: exit $rc: $e"
    [ "$(json_get "$out/b$opt/bench.json" "sorted({r['device'] for r in j['rows']})")" = "(['cpu'],)" ] ||
      fail "bench $opt cpu did not time the cpu only"
  done
  run bench --device cpu,gpu --out "$out/x"
  expect 2 "error: --device: 'gpu' is not one of cpu, cuda, cuda:N; use cuda or cuda:N"
  run validate $case --device cpu
  expect 2 "error: --device cpu: validate runs the CPU side always; --device names the GPU side, cuda or cuda:N"
  ;;
json)
  # run --dry-run --json: the resolved case as JSON, the device and memory
  run run $case --dry-run --json --device cpu heat.alpha=0.5 --out "$out/x"; expect 0 ""
  [ "$(json_get "$out/o" "j['status'], j['case']['heat']['alpha'], j['case']['initial']['expr'], j['device']['name'], j['memory'][0]['fits']")" = "('dry-run', 0.5, 'sin(pi*x)', 'cpu', True)" ] ||
    fail "run --dry-run --json printed: $o"
  # run --json failing: a case error (2), a divergence (1): the failure object
  run run $case heat.alhpa=1 --json --out "$out/x"
  [ "$rc" = 2 ] || fail "case error: exit $rc"
  [ "$(json_get "$out/o" "j['status'], j['exit_code'], j['error']")" = "('refused', 2, \"command line: heat.alhpa: unknown key; did you mean 'alpha'?\")" ] ||
    fail "case error --json printed: $o"
  run run tests/data/cases/diverge.yaml --device cpu --quiet --json --out "$out/dv"
  [ "$rc" = 1 ] || fail "divergence: exit $rc"
  [ "$(json_get "$out/o" "j['status'], j['exit_code'], j['error'].startswith('diverged: field u')")" = "('failed', 1, True)" ] ||
    fail "divergence --json printed: $o"
  # bench --json: bench.json on stdout, the table on stderr
  run bench --device cpu --sizes 8 --steps 1 --repeat 1 --json --out "$out/b"
  [ "$rc" = 0 ] || fail "bench --json: exit $rc: $e"
  "$py" -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a!=b)" \
    "$out/o" "$out/b/bench.json" || fail "bench --json printed other than bench.json: $o"
  [[ "$e" == *"ms/step"* ]] || fail "bench --json: no table on stderr"
  # validate --json and --out are taken; without a GPU it fails, as JSON
  run validate $case --json --out "$out/v" --device cuda:0
  if [ "$rc" = 3 ]; then
    [ "$(json_get "$out/o" "j['status'], j['exit_code']")" = "('failed', 3)" ] || fail "validate --json printed: $o"
    [ ! -e "$out/v" ] || fail "validate that failed wrote $out/v"
  else
    [ "$rc" = 0 ] || fail "validate --json: exit $rc: $e"
    [ "$(json_get "$out/o" "j['status'], j['pass'], j['validation_json']")" = "('pass', True, '$out/v/validation.json')" ] ||
      fail "validate --json printed: $o"
  fi
  # --help of each command ends with an example
  for c in run validate bench info; do
    run $c --help
    [[ "$o" == *"Example: gridforge $c "* ]] || fail "$c --help has no example"
  done
  ;;
memory)
  # once in all (the error); with --json once on stderr and once in the
  # failure object, which is all stdout holds
  run run cases/heat3d_hotspot.yaml --device cpu --dry-run 'grid.dims=[4000,4000,4000]' --out "$out/x"
  [ "$rc" = 3 ] || fail "exit $rc"
  n=$(cat "$out/o" "$out/e" | grep -o "needs 715 GiB" | wc -l)
  [ "$n" = 1 ] || fail "'needs 715 GiB' said $n times: stdout '$o', stderr '$e'"
  run run cases/heat3d_hotspot.yaml --device cpu --dry-run 'grid.dims=[4000,4000,4000]' --json --out "$out/x"
  [ "$rc" = 3 ] || fail "--json: exit $rc"
  [ "$(json_get "$out/o" "sorted(j), j['exit_code'], j['error'].count('needs 715 GiB')")" = "(['error', 'exit_code', 'status'], 3, 1)" ] ||
    fail "--json printed: $o"
  [ "$(grep -c "needs 715 GiB" "$out/e")" = 1 ] || fail "--json: stderr: $e"
  ;;
compare)
  for r in a b; do run run $case --device cpu --quiet --out "$out/$r"; [ "$rc" = 0 ] || fail "run $r: $e"; done
  run run $case --device cpu --quiet --out "$out/c" "initial.expr=1.001*sin(pi*x)"; [ "$rc" = 0 ] || fail "run c: $e"
  run run $case --device cpu --quiet --out "$out/d" output.every=300; [ "$rc" = 0 ] || fail "run d: $e"
  run compare "$out/a" "$out/b" --rtol 0; [ "$rc" = 0 ] || fail "a b: exit $rc: $e"
  [[ "$o" == *" pass"* && "$o" != *FAIL* ]] || fail "a b: $o"
  run compare "$out/a/fields.h5" "$out/c"; [ "$rc" = 4 ] || fail "a c: exit $rc"
  [[ "$o" == *FAIL* && "$e" == *"compare: MISMATCH"* ]] || fail "a c: $o $e"
  run compare "$out/a" "$out/d"; [ "$rc" = 4 ] || fail "a d: exit $rc"
  [[ "$e" == *"compare: steps only in '$out/a/fields.h5': "* ]] || fail "a d: $e"
  run compare "$out/a" "$out/d" --json
  [ "$(json_get "$out/o" "j['status'], j['exit_code'], len(j['problems']) > 0")" = "('mismatch', 4, True)" ] ||
    fail "--json: $o"
  run compare "$out/a" "$out/nothere"; expect 2 "error: compare: '$out/nothere': no such file"
  run compare "$out/a" "$out/a/run.json"
  expect 2 "error: compare: cannot open HDF5 file '$out/a/run.json': not an HDF5 file"
  run compare "$out/a"
  [ "$rc" = 2 ] && [[ "$e" == *"compare needs two runs"* ]] || fail "one argument: $rc $e"
  # a dataset that is not there: the message lists the steps (and the fields of a step)
  run run $case --device cpu --dry-run "initial={file: {path: $out/a/fields.h5, dataset: /steps/000007/u}}"
  [ "$rc" = 2 ] && [[ "$e" == *"no dataset '/steps/000007/u' in '$out/a/fields.h5'; '/steps' holds 000000, "* ]] ||
    fail "missing step: $rc $e"
  run run $case --device cpu --dry-run "initial={file: {path: $out/a/fields.h5, dataset: /steps/000000/v}}"
  [ "$rc" = 2 ] && [[ "$e" == *"; '/steps/000000' holds u" ]] || fail "missing field: $rc $e"
  # raymarch a run's fields.h5 without repeating its grid (grid: removed)
  run run cases/heat3d_hotspot.yaml --device cpu --quiet "grid.dims=[12,10,8]" "grid.extent=[2,1,1]" \
    heat.steps=10 output.every=10 --out "$out/h3"
  [ "$rc" = 0 ] || fail "3D run: $e"
  vol="raymarch.volume={file: {path: $out/h3/fields.h5, dataset: /steps/000010/u}}"
  run run cases/raymarch_cloud.yaml --device cpu grid=null "$vol" --dry-run
  [ "$rc" = 0 ] || fail "raymarch of fields.h5 without grid: $rc $e"
  [[ "$o" == *"dims: [12, 10, 8]"* && "$o" == *"spacing: ["*"0.1818"* ]] || fail "raymarch grid from the file: $o"
  run run cases/raymarch_cloud.yaml --device cpu grid=null "$vol" raymarch.camera.width=32 \
    raymarch.camera.height=24 --quiet --out "$out/rm"
  [ "$rc" = 0 ] && [ -s "$out/rm/raymarch_cloud.png" ] || fail "raymarch run: $rc $e"
  ;;
summary)
  run run cases/poisson3d_periodic.yaml --device cpu "grid.dims=[16,16,16]" --out "$out/fft"
  done_line=$(grep "^done:" "$out/e")
  [ "$rc" = 0 ] && [[ "$done_line" == "done: fft, a direct solve, residual "* && "$done_line" != *iteration* ]] ||
    fail "fft: $rc $e"
  run run cases/laplace2d_plate.yaml --device cpu laplace.max_iters=1 laplace.check_every=1 \
    laplace.tolerance=0.9999 --out "$out/one"
  [ "$rc" = 0 ] && [[ "$e" == *" in 1 iteration, residual "* ]] || fail "one iteration: $rc $e"
  ;;
*) fail "unknown mode" ;;
esac
echo "first_hour $mode: ok"
