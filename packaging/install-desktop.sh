#!/usr/bin/env bash
# Put torch.compile Inspector in the user's application menu and make it open .tcinspect files
# (and session manifests) on double-click. Per user, no root needed.
#   packaging/install-desktop.sh [PATH/TO/compile-inspector]   (default: the built app in build/dist)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="${1:-$here/build/dist/compile-inspector/compile-inspector}"
[ -x "$binary" ] || { echo "no app at $binary: run 'make dist' first, or pass the path" >&2; exit 2; }
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/mime/packages" "$HOME/.local/bin"
ln -sf "$binary" "$HOME/.local/bin/compile-inspector"
sed "s|^Exec=compile-inspector|Exec=$binary|" "$here/resources/desktop/compile-inspector.desktop" \
    > "$data/applications/compile-inspector.desktop"
cp "$here/resources/desktop/compile-inspector-mime.xml" "$data/mime/packages/compile-inspector.xml"
for size in 16 32 48 64 128 256; do
    mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
    cp "$here/resources/icons/compile-inspector-$size.png" "$data/icons/hicolor/${size}x${size}/apps/compile-inspector.png"
done
mkdir -p "$data/icons/hicolor/scalable/apps"
cp "$here/resources/icons/compile-inspector.svg" "$data/icons/hicolor/scalable/apps/compile-inspector.svg"
command -v update-mime-database >/dev/null && update-mime-database "$data/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
command -v xdg-mime >/dev/null && xdg-mime default compile-inspector.desktop application/x-tcinspect text/x-torch-trace || true
echo "installed: $data/applications/compile-inspector.desktop -> $binary"
