#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (libFuzzer through cargo-fuzz, on the stable toolchain, without
# a sanitizer: the code is safe Rust, so what is looked for is panics, overflows of the stack
# and hangs) for SECONDS each, starting from the checked-in seeds. New inputs found go to a
# temporary folder that is removed afterwards; a crash is kept under fuzz/artifacts/ and fails
# the run. Once fixed, the input goes to fuzz/regressions/TARGET/, which `cargo test` replays.
# Installs cargo-fuzz from crates.io when missing.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     # default: 60 seconds, every target
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(codec sql_plan protocol_commands protocol_handshake)

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "scripts/fuzz.sh: installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi

# Beside the workspace's own builds when CI keeps them outside the clone.
target_dir="${CARGO_TARGET_DIR:+$CARGO_TARGET_DIR/fuzz}"
target_dir="${target_dir:-target}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! cargo fuzz build --release --sanitizer none --target-dir "$target_dir" >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  exit 1
fi
for target in "${targets[@]}"; do
  mkdir -p "$work/$target"
  echo "scripts/fuzz.sh: $target for ${seconds}s"
  status=0
  cargo fuzz run --release --sanitizer none --target-dir "$target_dir" "$target" \
    "$work/$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 >"$work/$target.log" 2>&1 ||
    status=$?
  grep -E '^Done [0-9]+ runs' "$work/$target.log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$work/$target.log" >&2
    echo "scripts/fuzz.sh: $target failed (exit $status); the input is under fuzz/artifacts/$target/" >&2
    exit 1
  fi
done
