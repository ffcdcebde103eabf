#!/usr/bin/env bash
# The README's "Your first case", as a new user follows it (issue 25): the
# case and the commands are taken from README.md itself, so the page and the
# program cannot drift apart. Then what the page promises next: a look at the
# run (postprocess/plot.py), a typo's message, compare, Ctrl-C and the
# printed command that continues the run (the result equal to an
# uninterrupted run), and a second run into the same folder.
# Usage: readme_first_case.sh GRIDFORGE SOURCE_DIR WORK PYTHON
set -u
gf=$1 src=$2 work=$3 py=$4
fail() { echo "readme_first_case: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
mkdir -p build && ln -s "$gf" build/gridforge  # the README's build/gridforge
ln -s "$src/postprocess" postprocess

# The section's first yaml block is the case, its first plain block the commands.
"$py" - "$src/README.md" <<'EOF' || fail "README.md has no 'Your first case' with a case and commands"
import sys
text = open(sys.argv[1]).read()
sec = text.split("## Your first case", 1)[1].split("\n## ", 1)[0]
blocks, cur = [], None  # (info string, lines) of each fenced block
for line in sec.splitlines():
    if line.startswith("```"):
        if cur is None:
            cur = (line[3:].strip(), [])
        else:
            blocks.append(cur)
            cur = None
    elif cur is not None:
        cur[1].append(line)
case = "\n".join(next(b for i, b in blocks if i == "yaml")) + "\n"
cmds = "\n".join(next(b for i, b in blocks if i == ""))
open("mycase.yaml", "w").write(case)
open("commands.sh", "w").write(
    "".join(l.split("#")[0].rstrip() + "\n" for l in cmds.splitlines() if l.strip()))
EOF
[ "$(wc -l < commands.sh)" -ge 3 ] || fail "fewer than 3 commands: $(cat commands.sh)"
export OMP_NUM_THREADS=2
while read -r line; do
  eval "$line" > out.txt 2> err.txt || fail "'$line' exited $?: $(tail -3 err.txt)"
done < commands.sh
[ -f out/mycase/fields.h5 ] && [ -f out/mycase/mycase.pvd ] || fail "no out/mycase: $(ls -R out)"
[ -f out/mycase-long/fields.h5 ] || fail "no out/mycase-long"

# The typo the page shows, with its message word for word.
want=$(grep -o '^mycase.yaml:[0-9]*:[0-9]*: heat.alpah: .*' "$src/README.md")
[ -n "$want" ] || fail "the README shows no typo message"
sed 's/^  alpha:/  alpah:/' mycase.yaml > typo.yaml
cp mycase.yaml mycase.yaml.bak && mv typo.yaml mycase.yaml
build/gridforge run mycase.yaml --dry-run 2> err.txt; rc=$?
mv mycase.yaml.bak mycase.yaml
[ $rc = 2 ] && [ "$(tail -1 err.txt)" = "$want" ] || fail "typo: exit $rc, '$(tail -1 err.txt)', README: '$want'"

# A look without leaving the shell.
"$py" postprocess/plot.py out/mycase --step last --out look.png > /dev/null 2>err.txt ||
  fail "plot.py: $(cat err.txt)"
[ -s look.png ] || fail "plot.py wrote no look.png"

# compare: a run against itself passes, against the longer run's fields not.
build/gridforge compare out/mycase out/mycase --quiet || fail "compare with itself: exit $?"
build/gridforge compare out/mycase out/mycase-long --quiet 2>/dev/null; [ $? = 4 ] || fail "compare a longer run: not 4"

# Ctrl-C, then the command the run printed, as printed: the result equals an
# uninterrupted run, bit for bit (compare --rtol 0).
build/gridforge run mycase.yaml heat.t_end=1.0 --out out/whole --quiet || fail "uninterrupted run"
build/gridforge run mycase.yaml heat.t_end=1.0 --out out/cut 2> err.txt & pid=$!
for _ in $(seq 600); do [ -f out/cut/checkpoint.h5 ] && break; sleep 0.05; done
kill -INT $pid; wait $pid; rc=$?
[ $rc = 130 ] || fail "Ctrl-C: exit $rc ($(tail -1 err.txt))"
resume=$(tail -1 err.txt | sed -n 's/.*; continue with: //p')
[[ "$resume" == "build/gridforge run --restart out/cut/checkpoint.h5"* ]] || fail "no resume command: $(tail -1 err.txt)"
eval "$resume --quiet" || fail "'$resume' exited $?"
build/gridforge compare out/cut out/whole --rtol 0 --quiet || fail "the resumed run differs from the uninterrupted one"

# The same case into the same folder again: refused, then --overwrite replaces it.
build/gridforge run mycase.yaml 2> err.txt; rc=$?
[ $rc = 2 ] && grep -q -- "--overwrite" err.txt || fail "a second run into out/mycase: exit $rc: $(cat err.txt)"
build/gridforge run mycase.yaml --overwrite --quiet || fail "--overwrite: exit $?"
echo "readme_first_case: ok"
