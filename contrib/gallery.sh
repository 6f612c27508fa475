#!/usr/bin/env bash
# Regenerates the README gallery: runs every shipped scenario and copies
# its PNG plots to plots/gallery/<name>/. The four case scenarios run at
# full scale (the scale of their published figures); every other scenario
# at quick scale (the scale CI checks). GALLERY_FULL_SCALE overrides the list.
# Usage: contrib/gallery.sh   (from anywhere; uses target/release/fsmeta)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/fsmeta"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rm -rf plots/gallery
full=" ${GALLERY_FULL_SCALE-scenarios/xfs-active-trans.toml scenarios/btrfs-inode-index.toml scenarios/btrfs-dir-index-batch.toml scenarios/xfs-alloc-cutoff.toml} "
for f in scenarios/*.toml; do
  name=$(basename "$f" .toml)
  scale=--quick
  [[ "$full" == *" $f "* ]] && scale=
  "$bin" run "$f" $scale --out "$out" --silent || true
  # $out/<scenario name> is a link to the finished output set.
  dir=$(readlink -f "$out"/"$(sed -n 's/^name = "\(.*\)"/\1/p' "$f" | head -n 1)")
  if compgen -G "$dir/*.png" > /dev/null; then
    mkdir -p "plots/gallery/$name"
    cp "$dir"/*.png "plots/gallery/$name/"
  fi
done
echo "gallery: $(find plots/gallery -name '*.png' | wc -l) plots under plots/gallery/"
