#!/bin/sh
# Runs the host's job once, in the cgroup of whoever calls it, and records the outcome in the job
# folder (shared over 9p): stdout, stderr, then exit-code last, so that the host can tell a job that
# finished from one cut short. Shared by both guest flavours.
job=/run/attestorm-job
checkout=$(sed -n 's/.*attestorm\.checkout=\([^ ]*\).*/\1/p' /proc/cmdline)
: >"$job/started"
cd "$checkout" || { echo 126 >"$job/exit-code"; exit 0; }
ATTESTORM_JOB_DIR=$job ATTESTORM_JOB_FILES=$job/files bash "$job/job.sh" >"$job/stdout" 2>"$job/stderr"
echo $? >"$job/exit-code.tmp"
mv "$job/exit-code.tmp" "$job/exit-code"
sync
