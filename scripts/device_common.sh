# Sourced by the scripts that run ON THE GPU MACHINE (device_run.sh and the
# parts it calls): what they all do the same way.

# A step's heading in the log, with the time.
step() { echo; echo "=== $* ($(date +%T))"; }

# unpack_jit_library DIR: the JIT library (.device/libgatejit_jit.so.xz,
# made by scripts/prepare_device.sh) as DIR/libgatejit_jit.so; with
# `generic`, the shipped generic bundle beside it, as an install lays them
# out. Exits the calling script where either is missing.
unpack_jit_library() {
  local dir=$1
  python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
    .device/libgatejit_jit.so.xz "$dir/libgatejit_jit.so" \
    || { echo "no .device/libgatejit_jit.so.xz (scripts/prepare_device.sh)"; exit 1; }
  if [ "${2:-}" = generic ]; then
    cp .device/gatejit-generic.gjb "$dir/" || { echo "no .device/gatejit-generic.gjb (scripts/prepare_device.sh)"; exit 1; }
  fi
}
