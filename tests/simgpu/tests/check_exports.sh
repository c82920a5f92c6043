#!/bin/sh
# check_exports.sh REAL_LIBCUDART SIMGPU_LIBCUDART — every symbol the real libcudart.so.13
# exports is exported by simgpu's with the same version (cudaX@@libcudart.so.13), the SONAME
# matches, and simgpu exports nothing else except its simgpu* extensions (node SIMGPU_1).
# Exit 77 (skipped) when the real library is not installed.
real=$1 ours=$2
[ -f "$real" ] || { echo "no real libcudart at $real: skipped"; exit 77; }
list() { nm -D --defined-only "$1" | awk '$2 != "A" {print $3}' | sort; }
dir=$(mktemp -d)
list "$real" > "$dir/real"
list "$ours" > "$dir/ours"
missing=$(comm -23 "$dir/real" "$dir/ours")
extra=$(comm -13 "$dir/real" "$dir/ours" | grep -v '@@SIMGPU_1$')
rm -rf "$dir"
status=0
if [ -n "$missing" ]; then echo "missing or differently versioned:"; echo "$missing"; status=1; fi
if [ -n "$extra" ]; then echo "exported but not in the real library:"; echo "$extra"; status=1; fi
soname=$(readelf -d "$ours" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libcudart.so.13" ] || { echo "SONAME is '$soname'"; status=1; }
[ $status -eq 0 ] && echo "exports match the real libcudart.so.13 ($(list "$real" | wc -l) symbols)"
exit $status
