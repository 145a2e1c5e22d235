#!/usr/bin/env bash
# `dlsim sweep` killed with SIGKILL mid-run, then `--resume`d, ends with exactly the runs.csv (and summary.md)
# of an uninterrupted run: no finished row lost, no torn line kept. Kills at three moments: after the first row,
# after about half of them, and at a fixed time. Usage: kill_resume.sh DLSIM SWEEP.yaml
set -euo pipefail
dlsim=$1
sweep=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=$(sed -n 's/^name: *//p' "$sweep")

"$dlsim" sweep "$sweep" --jobs 2 --results-dir "$work/full" >/dev/null
total=$(($(wc -l <"$work/full/$name/runs.csv") - 1))
echo "uninterrupted: $total rows"

kill_and_resume() {  # kill_and_resume ROWS|@SECONDS
  local dir="$work/killed" csv pid rows
  csv="$dir/$name/runs.csv"
  rm -rf "$dir"
  "$dlsim" sweep "$sweep" --jobs 2 --results-dir "$dir" >/dev/null &
  pid=$!
  if [[ $1 == @* ]]; then
    sleep "${1#@}"
  else
    for _ in $(seq 1 20000); do
      [[ -f $csv ]] && (($(wc -l <"$csv") > $1)) && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.001
    done
  fi
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rows=0
  [[ -f $csv ]] && rows=$(($(wc -l <"$csv") - 1))  # killed before it wrote anything: no file, or a header
  ((rows < 0)) && rows=0
  echo "killed at $1: $rows of $total rows on disk"
  if ((rows >= total)); then
    echo "the sweep finished before the kill: it is too short for this test" >&2
    exit 1
  fi
  "$dlsim" sweep "$sweep" --jobs 2 --results-dir "$dir" --resume >"$work/resume.log"
  grep -q -e "^resuming .*: $rows of $total points done" -e "^nothing to resume" "$work/resume.log" || {
    echo "unexpected resume log:" >&2
    head -3 "$work/resume.log" >&2
    exit 1
  }
  cmp "$work/full/$name/runs.csv" "$csv"
  cmp "$work/full/$name/summary.md" "$dir/$name/summary.md"
}

kill_and_resume 1
kill_and_resume $((total / 2))
kill_and_resume @0.3
echo "every resumed runs.csv equals the uninterrupted one"

# Ctrl-C (SIGINT): the runs under way finish, the command that resumes is printed, and dlsim ends by SIGINT (the
# shell's 130); resuming it ends with the uninterrupted files.
dir="$work/interrupted"
"$dlsim" sweep "$sweep" --jobs 2 --results-dir "$dir" >"$work/int.log" 2>&1 &
pid=$!
sleep 0.3
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
if ((rc != 130)); then
  echo "Ctrl-C: expected the end by SIGINT (130), got $rc" >&2
  cat "$work/int.log" >&2
  exit 1
fi
grep -q "^to finish the sweep: dlsim sweep $sweep --results-dir $dir --jobs 2 --resume$" "$work/int.log"
[[ ! -e $dir/$name/summary.md ]]
"$dlsim" sweep "$sweep" --jobs 2 --results-dir "$dir" --resume >/dev/null
cmp "$work/full/$name/runs.csv" "$dir/$name/runs.csv"
cmp "$work/full/$name/summary.md" "$dir/$name/summary.md"
echo "Ctrl-C: ended by SIGINT, resumed to the uninterrupted runs.csv"
