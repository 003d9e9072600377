#!/bin/sh
# Does tools/deps.sh keep a host's nginx Lua module? In a Debian bookworm
# chroot made by debootstrap (DIR), as root: install Debian's nginx Lua
# module, which brings OpenResty's LuaJIT (libluajit2-5.1-2), then run
# `tools/deps.sh build luajit` there and `make LUA=luajit` on a copy of
# this tree, and check that the module is still installed.
#   tools/hosts/openresty-chroot.sh DIR
# (debootstrap --variant=minbase bookworm DIR http://deb.debian.org/debian)
# shellcheck disable=SC2016 # the chroot expands dpkg-query formats
set -eu
root=$1
# No service may start inside the chroot (it shares this machine's ports).
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/proc" && mount -t proc proc "$root/proc"
trap 'umount "$root/proc"' EXIT
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive sh -c "$1"; }
in_root 'apt-get update && apt-get install -y --no-install-recommends nginx libnginx-mod-http-lua'
in_root 'dpkg-query -W libnginx-mod-http-lua libluajit2-5.1-2 luajit luajit2 2>&1 || true'
rm -rf "$root/avxbuf" && mkdir "$root/avxbuf"
git archive HEAD | tar -x -C "$root/avxbuf"
cp tools/deps.sh "$root/avxbuf/tools/deps.sh"   # the working copy's, under test
in_root 'cd /avxbuf && tools/deps.sh build luajit'
in_root 'dpkg-query -W -f="\${Package} \${Version} \${Status}\n" libnginx-mod-http-lua libluajit2-5.1-2 luajit2 libluajit2-5.1-dev'
in_root 'dpkg-query -W -f="\${Status}\n" libnginx-mod-http-lua | grep -qx "install ok installed"'
in_root 'cd /avxbuf && make LUA=luajit BUILD=build-chroot native && luajit -e "package.cpath = \"build-chroot/?.so\" local a = require \"avxbuf\" local b = a.new() b:put(\"ok\") assert(tostring(b) == \"ok\") print(jit.version, a.version, a.ffi)"'
in_root 'nginx -V 2>&1 | head -1; ls /etc/nginx/modules-enabled/'
echo "openresty-chroot: libnginx-mod-http-lua still installed after tools/deps.sh build luajit"
