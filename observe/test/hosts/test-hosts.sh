#!/bin/sh
# Hosts for tests on one machine: Linux network namespaces joined by a bridge, each with
# its own host name (a UTS namespace), its own /etc/hosts naming every test host, its own
# "disk" (a mount namespace in which DIR/disk is that host's directory DIR/disks/HOST, so
# that no host sees another's files there) and an address from 198.18.0.0/15, the range
# RFC 2544 sets aside for benchmarks. Traffic between them never leaves the machine.
#
#   test-hosts.sh create DIR LAUNCH HOST... [--absent NAME]
#       makes the hosts; LAUNCH is the launching host (its own network and name; it
#       keeps this machine's files, so that it can enter the others). --absent names a
#       host in /etc/hosts that does not exist (unreachable). Exits 77 when this machine
#       cannot make namespaces (not root, no CAP_SYS_ADMIN): the caller skips.
#   test-hosts.sh remove DIR
#       kills every process left in the hosts, removes the namespaces and DIR.
#
# create writes DIR/remote-shell (mpiexec -launcher-exec: `remote-shell [-x] HOST
# COMMAND...` runs COMMAND through sh on HOST, as ssh does) and DIR/on (`on HOST PROGRAM
# ARGS...` runs a program on HOST). Namespaces of earlier runs whose process is gone are
# removed first.
set -eu

id_of() { basename "$1"; }

# Removes the hosts of the directory $1 (namespaces named after it, mounts under it).
remove_hosts() {
  dir=$1
  id=$(id_of "$dir")
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$id-" || true); do
    for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$id-" || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
  for mount in $(awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$mount" 2>/dev/null || true
  done
  umount -l "$dir/ns" 2>/dev/null || true
  rm -rf "$dir"
}

# Removes the hosts of earlier runs whose owner (the pid in the directory's name) is gone.
remove_stale() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^rtcp-hosts-[0-9]*-' || true); do
    owner=$(echo "$ns" | sed 's/^rtcp-hosts-\([0-9]*\)-.*/\1/')
    [ -d "/proc/$owner" ] || remove_hosts "${TMPDIR:-/tmp}/rtcp-hosts-$owner"
  done
}

create() {
  dir=$1 launch=$2
  shift 2
  id=$(id_of "$dir")
  remove_stale
  mkdir -p "$dir/ns" "$dir/disk" "$dir/disks/$launch"
  if ! ip netns add "$id-switch" 2>"$dir/error"; then
    echo "cannot create network namespaces here: $(cat "$dir/error")" >&2
    rm -rf "$dir"
    exit 77
  fi
  # Namespace files can be kept only on a mount that does not propagate.
  mount --bind "$dir/ns" "$dir/ns"
  mount --make-private "$dir/ns"
  ip -n "$id-switch" link add bridge type bridge
  ip -n "$id-switch" link set bridge up
  printf '127.0.0.1 localhost\n198.18.0.1 %s\n' "$launch" >"$dir/hosts"
  number=1
  add_host "$launch" 1 launch
  absent=""
  while [ $# -gt 0 ]; do
    if [ "$1" = --absent ]; then
      echo "198.18.0.254 $2" >>"$dir/hosts"
      shift 2
      continue
    fi
    number=$((number + 1))
    echo "198.18.0.$number $1" >>"$dir/hosts"
    add_host "$1" "$number" remote
    shift
  done
  write_scripts "$dir" "$launch"
}

# add_host NAME NUMBER launch|remote: its network namespace on the bridge, its name and
# (remote hosts) its mount namespace with its own disk and /etc/hosts.
add_host() {
  name=$1 number=$2 kind=$3
  ip netns add "$id-$name"
  ip -n "$id-switch" link add "port$number" type veth peer name eth0 netns "$id-$name"
  ip -n "$id-switch" link set "port$number" master bridge up
  ip -n "$id-$name" addr add "198.18.0.$number/24" dev eth0
  ip -n "$id-$name" link set eth0 up
  ip -n "$id-$name" link set lo up
  touch "$dir/ns/$name.uts"
  if [ "$kind" = launch ]; then
    unshare --uts="$dir/ns/$name.uts" hostname "$name"
    return
  fi
  mkdir -p "$dir/disks/$name"
  touch "$dir/ns/$name.mnt"
  unshare --uts="$dir/ns/$name.uts" --mount="$dir/ns/$name.mnt" --propagation private \
    sh -c 'hostname "$1" && mount --bind "$2" "$3" && mount --bind "$4" /etc/hosts' \
    sh "$name" "$dir/disks/$name" "$dir/disk" "$dir/hosts"
}

write_scripts() {
  dir=$1 launch=$2
  cat >"$dir/remote-shell" <<EOF
#!/bin/sh
# mpiexec's remote shell for the test hosts of $dir: [OPTIONS] HOST COMMAND...
# COMMAND, joined by spaces, runs through sh on HOST, as ssh runs it.
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1
shift
if [ ! -e "$dir/ns/\$host.mnt" ]; then
  echo "remote-shell: connect to host \$host: No route to host" >&2
  exit 255
fi
exec nsenter --net=/run/netns/$id-\$host --uts="$dir/ns/\$host.uts" --mount="$dir/ns/\$host.mnt" sh -c "\$*"
EOF
  cat >"$dir/on" <<EOF
#!/bin/sh
# on HOST PROGRAM ARGS...: runs a program on a test host of $dir.
host=\$1
shift
if [ "\$host" = "$launch" ]; then
  exec nsenter --net=/run/netns/$id-\$host --uts="$dir/ns/\$host.uts" "\$@"
fi
exec nsenter --net=/run/netns/$id-\$host --uts="$dir/ns/\$host.uts" --mount="$dir/ns/\$host.mnt" "\$@"
EOF
  chmod +x "$dir/remote-shell" "$dir/on"
}

case "${1:-}" in
  create)
    [ $# -ge 3 ] || { echo "usage: $0 create DIR LAUNCH HOST... [--absent NAME]" >&2; exit 2; }
    shift
    create "$@"
    ;;
  remove)
    [ $# -eq 2 ] || { echo "usage: $0 remove DIR" >&2; exit 2; }
    remove_hosts "$2"
    ;;
  *)
    echo "usage: $0 create DIR LAUNCH HOST... [--absent NAME] | remove DIR" >&2
    exit 2
    ;;
esac
