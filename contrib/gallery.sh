#!/usr/bin/env bash
# Regenerates the README gallery: runs every shipped scenario (quick scale,
# the scale CI checks) and copies its PNG plots to plots/gallery/<name>/.
# Usage: contrib/gallery.sh   (from anywhere; uses target/release/fsmeta)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/fsmeta"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rm -rf plots/gallery
for f in scenarios/*.toml; do
  name=$(basename "$f" .toml)
  "$bin" run "$f" --quick --out "$out" --silent || true
  # $out/<scenario name> is a link to the finished output set.
  dir=$(readlink -f "$out"/"$(sed -n 's/^name = "\(.*\)"/\1/p' "$f" | head -n 1)")
  if compgen -G "$dir/*.png" > /dev/null; then
    mkdir -p "plots/gallery/$name"
    cp "$dir"/*.png "plots/gallery/$name/"
  fi
done
echo "gallery: $(find plots/gallery -name '*.png' | wc -l) plots under plots/gallery/"
