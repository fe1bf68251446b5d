#!/usr/bin/env bash
# Build the Debian package from the frozen app: the app under /opt/compile-inspector, a launcher on
# PATH, the desktop entry, icons and MIME types. shared-mime-info, desktop-file-utils and the icon
# cache pick these up through their dpkg triggers, on install and on removal, so there are no
# maintainer scripts.   packaging/make_deb.sh [FROZEN_APP_DIR] [OUT_DIR]   (make deb)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
app="${1:-$here/build/dist/compile-inspector}"
out="${2:-$here/build}"
[ -x "$app/compile-inspector" ] || { echo "no frozen app in $app: run 'make dist' first" >&2; exit 2; }
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$here/pyproject.toml")"
arch="$(dpkg --print-architecture)"
root="$out/deb-root"
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" "$root/usr/share/mime/packages"
cp -a "$app" "$root/opt/compile-inspector"
ln -s /opt/compile-inspector/compile-inspector "$root/usr/bin/compile-inspector"
cp "$here/resources/desktop/compile-inspector.desktop" "$root/usr/share/applications/"
cp "$here/resources/desktop/compile-inspector-mime.xml" "$root/usr/share/mime/packages/compile-inspector.xml"
for size in 16 32 48 64 128 256; do
    mkdir -p "$root/usr/share/icons/hicolor/${size}x${size}/apps"
    cp "$here/resources/icons/compile-inspector-$size.png" "$root/usr/share/icons/hicolor/${size}x${size}/apps/compile-inspector.png"
done
mkdir -p "$root/usr/share/icons/hicolor/scalable/apps"
cp "$here/resources/icons/compile-inspector.svg" "$root/usr/share/icons/hicolor/scalable/apps/"
# The frozen app carries its libraries except the C library, OpenGL/EGL and libxcb (never bundled)
# and the xcb helper libraries Qt's xcb plugin loads when the build machine had none to bundle.
cat > "$root/DEBIAN/control" <<CONTROL
Package: compile-inspector
Version: $version
Architecture: $arch
Maintainer: torch.compile Inspector developers <noreply@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6, libgl1, libegl1, libxcb1, libxcb-icccm4, libxcb-keysyms1, libxcb-image0, libxcb-render-util0,
 libxcb-xkb1, libxkbcommon-x11-0, libxcb-cursor0
Recommends: shared-mime-info, desktop-file-utils, xdg-utils, libwayland-client0, libwayland-cursor0
Section: devel
Priority: optional
Description: see what torch.compile captured, broke, fused and generated
 A desktop app and CLI that reads TORCH_TRACE logs and .tcinspect session bundles: graph breaks,
 recompiles, generated code and whether compiling paid off. Captures run in the user's own Python.
CONTROL
deb="$out/compile-inspector_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
rm -rf "$root"
echo "$deb ($(du -h "$deb" | cut -f1))"
