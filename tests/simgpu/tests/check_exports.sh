#!/bin/sh
# check_exports.sh REAL_LIBCUDART SIMGPU_LIBCUDART — every symbol the real libcudart.so.N
# exports is exported by simgpu's with the same version (cudaX@@libcudart.so.N), the SONAME
# matches the real one's, and simgpu exports nothing else except its simgpu* extensions (node
# SIMGPU_1). For libcudart.so.13 (the toolkit's) and libcudart.so.12 (CUDA 12.9's from PyPI,
# tools/fetch-cuda12). Exit 77 (skipped) when the real library is not there.
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
want=$(readelf -d "$real" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "$want" ] || { echo "SONAME is '$soname', the real one's '$want'"; status=1; }
[ $status -eq 0 ] && echo "exports match the real $want ($(list "$real" | wc -l) symbols)"
exit $status
