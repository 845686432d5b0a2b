#!/bin/sh
# slurm-loopback.sh: a real Slurm cluster on this machine, for tests and to
# try fastpath's Slurm recipe (docs/fleet.md). Debian/Ubuntu packages:
#   apt-get install slurm-wlm munge
# Runs as root (SlurmUser=root): munged, slurmctld and NODES slurmd on
# 127.0.0.1, every file (config, sockets, state, logs) under DIR, no
# cgroups, nothing in /etc touched.
#
#   slurm-loopback.sh start DIR [NODES]   start, wait until NODES nodes are idle
#   slurm-loopback.sh stop DIR            stop everything started in DIR
#   slurm-loopback.sh logs DIR            print every daemon's log
#
# After start, `export SLURM_CONF=DIR/slurm.conf` and use srun/sinfo as usual.
# Several slurmd run on one host with distinct NodeName and ports (slurmd -N);
# where the Slurm build refuses that, use NODES=1 and several tasks.
set -eu
cmd=${1:?usage: slurm-loopback.sh start|stop|logs DIR [NODES]}
dir=${2:?usage: slurm-loopback.sh start|stop|logs DIR [NODES]}
nodes=${3:-3}
wait_s=${SLURM_LOOPBACK_WAIT:-60}

stop() {
	for p in "$dir"/run/*.pid; do
		[ -f "$p" ] || continue
		pid=$(cat "$p" 2>/dev/null || true)
		case $pid in '' | *[!0-9]*) continue ;; esac
		kill "$pid" 2>/dev/null || true
	done
	sleep 1
	for p in "$dir"/run/*.pid; do
		[ -f "$p" ] || continue
		pid=$(cat "$p" 2>/dev/null || true)
		case $pid in '' | *[!0-9]*) continue ;; esac
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$p"
	done
}

logs() {
	for f in "$dir"/log/*.log; do
		[ -f "$f" ] || continue
		echo "==== $f"
		tail -n 80 "$f"
	done
}

case $cmd in
stop) stop; exit 0 ;;
logs) logs; exit 0 ;;
start) ;;
*) echo "unknown command $cmd" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || { echo "slurm-loopback.sh: must run as root (slurmd starts tasks as their user)" >&2; exit 2; }
for b in munged mungekey slurmctld slurmd sinfo srun; do
	command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || { echo "slurm-loopback.sh: $b not found (apt-get install slurm-wlm munge)" >&2; exit 2; }
done
PATH=$PATH:/usr/sbin
mkdir -p "$dir/run" "$dir/log" "$dir/state" "$dir/munge"
dir=$(cd "$dir" && pwd)
chmod 700 "$dir/munge"

# Ports: a base from the folder's name, so two clusters on one machine differ.
base=$((20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000))
ctld_port=$base
first_node_port=$((base + 1))
last=$((first_node_port + nodes - 1))

# munge: its own key, socket and files; nothing in /etc or /run.
[ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" --force
chmod 600 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
	--pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"

if [ "$nodes" -gt 1 ]; then
	nodelist="n[1-$nodes]"
	ports="[$first_node_port-$last]"
else
	nodelist=n1
	ports=$first_node_port
fi
cpus=$(nproc)
cat > "$dir/slurm.conf" <<CONF
ClusterName=fastpath-loopback
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$nodelist NodeHostname=localhost NodeAddr=127.0.0.1 Port=$ports CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:$nodes
CONF
export SLURM_CONF="$dir/slurm.conf"

slurmctld -f "$SLURM_CONF" -i
i=1
while [ "$i" -le "$nodes" ]; do
	mkdir -p "$dir/spool/n$i"
	slurmd -f "$SLURM_CONF" -N "n$i"
	i=$((i + 1))
done

# Wait, bounded, until every node is idle.
t=0
while :; do
	idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
	[ "$idle" -ge "$nodes" ] && break
	t=$((t + 1))
	if [ "$t" -ge "$wait_s" ]; then
		echo "slurm-loopback.sh: $idle of $nodes nodes idle after ${wait_s}s" >&2
		sinfo -N -l >&2 || true
		logs >&2
		exit 1
	fi
	sleep 1
done
sinfo -N -o '%N %T %c %P'
echo "export SLURM_CONF=$SLURM_CONF"
