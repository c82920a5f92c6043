#!/bin/sh
# check_driver_exports.sh REAL_LIBCUDA SIMGPU_LIBCUDA — simgpu's libcuda.so.1 has the real SONAME,
# exports its entry points unversioned (as NVIDIA's driver does), and exports nothing the real
# driver does not (REAL_LIBCUDA: the toolkit's stubs/libcuda.so, which has the same export list).
# Exit 77 (skipped) when the toolkit has no stub library.
real=$1 ours=$2
[ -f "$real" ] || { echo "no libcuda stub at $real: skipped"; exit 77; }
list() { nm -D --defined-only "$1" | awk '$2 != "A" {print $3}' | sort; }
dir=$(mktemp -d)
list "$real" > "$dir/real"
list "$ours" > "$dir/ours"
extra=$(comm -13 "$dir/real" "$dir/ours")
versioned=$(grep '@' "$dir/ours")
count=$(wc -l < "$dir/ours")
rm -rf "$dir"
status=0
if [ -n "$extra" ]; then echo "exported but not by the real driver:"; echo "$extra"; status=1; fi
if [ -n "$versioned" ]; then echo "versioned exports (the real driver's are not):"; echo "$versioned"; status=1; fi
for sym in cuInit cuGetProcAddress_v2 cuLaunchKernel cuLaunchKernelEx cuModuleLoadData cuMemAlloc_v2; do
  nm -D --defined-only "$ours" | awk '{print $3}' | grep -qx "$sym" || { echo "missing $sym"; status=1; }
done
soname=$(readelf -d "$ours" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libcuda.so.1" ] || { echo "SONAME is '$soname'"; status=1; }
[ $status -eq 0 ] && echo "$count exports, all the real driver's, unversioned; SONAME libcuda.so.1"
exit $status
