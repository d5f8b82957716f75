#!/usr/bin/env bash
# Tests data/fetch offline, through --from: a full copy, a cheap re-run, a corrupted source,
# a repaired destination, usage errors and the URLs of --list.
#
# Usage: data/fetch_test.sh MIRROR   (a folder with the layout of $VOLCCL_DATA, holding the
#                                     oasis and mitochondria sets; exits 77, skipped, without it)
set -euo pipefail

mirror=${1:-}
[ -n "$mirror" ] || { echo "usage: data/fetch_test.sh MIRROR" >&2; exit 2; }
if [ ! -d "$mirror" ]; then
  echo "fetch_test: skipped: the mirror $mirror does not exist"
  exit 77
fi

data_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fetch=$data_dir/fetch
checksums=$data_dir/SHA256SUMS
oasis=brain_oasis1_neurite
lucchi=em_mitochondria_lucchi_pp
# The manifest itself is checked too: 3 subjects x 2 volumes, 2 x 165 slices.
expected_count=336

work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

grep -E "  ($oasis|$lucchi)/" "$checksums" >"$work/expected.sums"
while read -r _ path; do
  if [ ! -f "$mirror/$path" ]; then
    echo "fetch_test: skipped: the mirror $mirror lacks $path"
    exit 77
  fi
done <"$work/expected.sums"

failures=0
pass() { echo "ok - $*"; }
fail() {
  echo "FAIL - $*"
  failures=$((failures + 1))
}
# Runs fetch with stdout and stderr in $work/out; sets $status.
run_fetch() {
  status=0
  "$fetch" "$@" >"$work/out" 2>&1 || status=$?
}
show_output() { sed 's/^/    | /' "$work/out"; }
# True when DEST holds a leftover temporary file (.part or the .deb's folder).
has_leftovers() { [ -n "$(find "$1" \( -name '*.part' -o -name '.fetch-*' \) -print -quit)" ]; }

# (a) A fresh copy: every file present, with the right checksum.
dest=$work/dest
run_fetch --from "$mirror" --dest "$dest" oasis mitochondria
count=$(find "$dest" -type f | wc -l)
if [ "$status" -eq 0 ] && [ "$(wc -l <"$work/expected.sums")" -eq "$expected_count" ] \
  && [ "$count" -eq "$expected_count" ] \
  && (cd "$dest" && sha256sum --check --quiet "$work/expected.sums") \
  && grep -q "^export VOLCCL_DATA=$dest\$" "$work/out"; then
  pass "(a) fetch --from copies all $expected_count files with the right checksums"
else
  fail "(a) fetch --from: exit $status, $count files"; show_output
fi

# (b) A re-run finds everything present and writes nothing.
touch "$work/after-first-run"
run_fetch --from "$mirror" --dest "$dest" oasis mitochondria
rewritten=$(find "$dest" -newer "$work/after-first-run" -type f | wc -l)
if [ "$status" -eq 0 ] && [ "$rewritten" -eq 0 ] \
  && grep -q "^fetch: oasis: 0 fetched, 6 already present" "$work/out" \
  && grep -q "^fetch: mitochondria: 0 fetched, 330 already present" "$work/out"; then
  pass "(b) a re-run skips the $expected_count present files"
else
  fail "(b) re-run: exit $status, $rewritten files rewritten"; show_output
fi

# (c) A truncated file in the mirror: fetch fails, names it and its checksums, and leaves
# neither it nor a partial file in DEST (the files before it are kept).
bad=$oasis/OASIS_OAS1_0456_MR1/aligned_norm.nii.gz
bad_mirror=$work/bad-mirror
mkdir -p "$bad_mirror"
cp -R "$mirror/$oasis" "$bad_mirror/"
chmod -R u+w "$bad_mirror"  # the mirror may be read-only
truncate -s 1000 "$bad_mirror/$bad"
bad_sha256=$(sha256sum <"$bad_mirror/$bad" | cut -d' ' -f1)
good_sha256=$(awk -v path="$bad" '$2 == path { print $1 }' "$checksums")
bad_dest=$work/bad-dest
run_fetch --from "$bad_mirror" --dest "$bad_dest" oasis
if [ "$status" -ne 0 ] && grep -qF "fetch: checksum mismatch for $bad" "$work/out" \
  && grep -qF "expected sha256 $good_sha256, got $bad_sha256" "$work/out" \
  && [ ! -e "$bad_dest/$bad" ] && ! has_leftovers "$bad_dest" \
  && [ -f "$bad_dest/$oasis/OASIS_OAS1_0455_MR1/aligned_norm.nii.gz" ]; then
  pass "(c) a truncated source fails (exit $status), is named and leaves nothing behind"
else
  fail "(c) truncated source: exit $status"; show_output; find "$bad_dest" -type f
fi

# (c') A truncated file already in DEST is replaced by a good copy.
truncate -s 1000 "$dest/$bad"
run_fetch --from "$mirror" --dest "$dest" oasis
if [ "$status" -eq 0 ] && grep -qF "has the wrong checksum" "$work/out" \
  && [ "$(sha256sum <"$dest/$bad" | cut -d' ' -f1)" = "$good_sha256" ] \
  && grep -q "^fetch: oasis: 1 fetched, 5 already present" "$work/out"; then
  pass "(c') a bad file in DEST is fetched again"
else
  fail "(c') bad file in DEST: exit $status"; show_output
fi

# (d) An unknown set is a usage error: exit 2 and the usage, nothing created.
run_fetch --from "$mirror" --dest "$work/unused" oasis no-such-set
if [ "$status" -eq 2 ] && grep -qF "unknown set 'no-such-set'" "$work/out" \
  && grep -q "^usage: data/fetch" "$work/out" && [ ! -e "$work/unused" ]; then
  pass "(d) an unknown set exits 2 with the usage"
else
  fail "(d) unknown set: exit $status"; show_output
fi

# (e) A missing mirror is a clear error, before DEST is created.
run_fetch --from "$work/no-such-mirror" --dest "$work/unused" oasis
if [ "$status" -ne 0 ] && [ "$status" -ne 2 ] \
  && grep -qF "fetch: the mirror $work/no-such-mirror is not a folder" "$work/out" \
  && [ ! -e "$work/unused" ]; then
  pass "(e) a missing mirror fails (exit $status) with a clear message"
else
  fail "(e) missing mirror: exit $status"; show_output
fi

# (f) --list shows the pinned URLs, with Lucchi++ encoded.
run_fetch --list oasis mitochondria
if [ "$status" -eq 0 ] && grep -qF "https://raw.githubusercontent.com/htwin/voxelmorph_torch/7ce45b3af882c5e24f8f7a1303292eaafb6fbf2c/Testfiles/OASIS_OAS1_0457_MR1/aligned_seg35.nii.gz" "$work/out" \
  && grep -qF "https://raw.githubusercontent.com/mental689/connectomics/6d533bf2b0cd3e3427d5bb5cab216f0aaa828e70/dataset/Lucchi%2B%2B/Test_Out/{0..164}.png" "$work/out"; then
  pass "(f) --list prints the pinned URLs"
else
  fail "(f) --list: exit $status"; show_output
fi

if [ "$failures" -gt 0 ]; then
  echo "fetch_test: $failures failed"
  exit 1
fi
echo "fetch_test: all passed"
