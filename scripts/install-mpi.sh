#!/usr/bin/env bash
# Installs Open MPI (the library, its headers and mpirun) and libclang (apt, as root), which
# orogen-cli's `mpi` cargo feature needs: rsmpi's mpi-sys generates its bindings with bindgen
# (libclang) from Open MPI's headers. Idempotent, and quick when everything is already there.
# Prints the mpirun it found.
#
#   scripts/install-mpi.sh
set -euo pipefail

have_all() {
    command -v mpirun >/dev/null 2>&1 &&
        command -v mpicc >/dev/null 2>&1 &&
        ldconfig -p | grep -q 'libclang[-0-9.]*\.so'
}

if ! have_all; then
    echo "install-mpi: installing libopenmpi-dev, openmpi-bin and libclang-dev (apt)"
    # shellcheck source=lib/debian-mirror.sh
    source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"
    apt_install libopenmpi-dev openmpi-bin libclang-dev
fi
echo "install-mpi: $(command -v mpirun) ($(mpirun --version 2>/dev/null | head -n 1))"
