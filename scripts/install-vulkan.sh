#!/usr/bin/env bash
# Installs Mesa's software Vulkan driver (lavapipe) and the Vulkan loader (apt, as root), so
# that orogen-gpu's tests run their WGSL compute shaders on a machine without a GPU.
# Idempotent, and quick when both are already there. Prints the ICD file to point
# VK_ICD_FILENAMES at (the tests find it on their own).
#
#   scripts/install-vulkan.sh
set -euo pipefail

ICD=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json

if [[ ! -f "$ICD" ]] || ! ldconfig -p | grep -q 'libvulkan\.so\.1'; then
    echo "install-vulkan: installing mesa-vulkan-drivers and libvulkan1 (apt)"
    # shellcheck source=lib/debian-mirror.sh
    source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"
    apt_install mesa-vulkan-drivers libvulkan1
fi
echo "install-vulkan: lavapipe at $ICD"
