# shellcheck shell=bash
# k8s.sh: a throwaway Kubernetes cluster on this machine, on loopback
# addresses only, for scripts/test-k8s.sh: etcd (Debian's etcd-server);
# kube-apiserver, kube-controller-manager, kube-scheduler and kubelet built
# from the k8s.io/kubernetes module at one pinned version (K8S_VERSION,
# cached by version); certificates made on the fly (openssl); real nodes,
# a kubelet and a containerd (Debian's, CRI on) of its own each, named
# 127.0.0.2, 127.0.0.3, ...; and kwok's simulated nodes for pods that need
# not run. Source after common.sh. docs/design-reference.md#the-scripts.
#
# STATE (k8s_state_dir; claimed and cleaned by runstate like a run's state):
#   owner, lock            runstate claim's: one live session a state; after a
#                          kill -9 the next k8s_up stops what the pidfiles and
#                          the nodes' engine marks record, and k8s_host_clean
#                          what the nodes left outside STATE
#   pids/NAME.pid          each process, leader of its own process group (setsid):
#                          etcd, kube-*, kwok, kubelet-NODE, containerd-NODE,
#                          nginx-SANDBOX (k8s-cni-target.sh)
#   logs/NAME.log          its stdout and stderr
#   pki/                   the CA, the serving and client certificates, the
#                          service-account key pair (the keys 0600)
#   admin.kubeconfig       kubectl's (system:masters); the controllers, kwok and
#                          the kubelets use it too
#   etcd/, kcm/, scheduler/, kwok/   etcd's data; the controllers' serving
#                          certificates; kwok's Stages
#   NODE/                  a real node (k8s_node_up), marked as an engine:
#                          containerd's root, state (the pods' network
#                          namespaces too) and socket, the kubelet's root
#                          directory (the pods' volumes) and config, the pods'
#                          logs, the CNI config, plugins and IP allocations
#   targets/SANDBOX/       the nginx a pod got on its loopback, its access log
# Outside STATE: the nodes' cgroups (/idpbench-k8s-TAG-N in every hierarchy)
# and CNI bridges (idpkTAG6N), removed by k8s_host_clean; the binaries'
# cache (IDPBENCH_CACHE/k8s), the Go module and build caches; the OS packages
# etcd-server and containernetworking-plugins when missing.
# k8s_down STATE stops all of it and deletes STATE.

# The one Kubernetes release (k8s.io/kubernetes on the Go module proxy) the
# control plane and the kubelets are built from, and kwok's release. 1.34:
# the last minor whose kubelet takes cgroup v1 by default (this machine's;
# failCgroupV1 is set false all the same), the nearest to kubectl 1.32
# (which warns of the +2 skew and works), its kubelet fine with Debian's
# containerd 1.6.
K8S_VERSION=v1.34.4
KWOK_VERSION=v0.8.0

# k8s_bin_dir prints where the binaries of K8S_VERSION are cached, and
# k8s_kwok_dir where kwok's (KWOK_VERSION) is.
k8s_bin_dir() { printf '%s/k8s/%s\n' "$IDPBENCH_CACHE" "$K8S_VERSION"; }
k8s_kwok_dir() { printf '%s/k8s/kwok-%s\n' "$IDPBENCH_CACHE" "$KWOK_VERSION"; }

# k8s_build_module DIR writes into DIR a throwaway Go module that requires
# k8s.io/kubernetes at K8S_VERSION and replaces every k8s.io staging module
# (its own go.mod replaces them with ./staging/src/..., which `go install
# MODULE@VERSION` refuses and a dependency's go.mod cannot give) with the
# release of the same number, v0.MINOR.PATCH.
k8s_build_module() {
	local dir="$1" gomod staging
	gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)" || {
		warn "cannot download k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"
		return 1
	}
	staging="v0.${K8S_VERSION#v1.}"
	{
		printf 'module idpbench.local/k8sbuild\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\n' \
			"$(awk '$1 == "go" { print $2; exit }' "$gomod")" "$K8S_VERSION"
		awk -v v="$staging" '$2 == "=>" && $3 ~ /^\.\/staging\// { printf "replace %s => %s %s\n", $1, $1, v }' "$gomod"
	} >"$dir/go.mod"
}

# k8s_cached DIR WHAT BUILD_FUNCTION: DIR when it exists, else BUILD_FUNCTION
# WORK builds WHAT into WORK/out, in a scratch directory WORK renamed to DIR
# once it is done (an interrupted build leaves no DIR that looks complete);
# a failed build's WORK is removed. Static builds (CGO_ENABLED=0, -trimpath),
# nice'd.
k8s_cached() {
	local dir="$1" what="$2" work
	[[ ! -d "$dir" ]] || return 0
	require_cmd go jq
	work="$(make_tmpdir k8s-build)"
	log "building $what into $dir (once: later runs take it from there; minutes on two cores)"
	mkdir -p "$work/out"
	"$3" "$work" || {
		rm -rf "$work"
		die "building $what failed (go's errors above)"
	}
	mkdir -p "$(dirname "$dir")"
	mv "$work/out" "$dir"
	rm -rf "$work"
}

# k8s_build_kube WORK builds the Kubernetes binaries into WORK/out, their
# version stamped as Kubernetes's own build does (hack/lib/version.sh):
# without it they say v0.0.0-master, which kubectl cannot parse.
k8s_build_kube() {
	local minor="${K8S_VERSION#v1.}" x="" pkg var
	minor="${minor%%.*}"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		for var in "gitVersion=$K8S_VERSION" gitMajor=1 "gitMinor=$minor" gitTreeState=clean; do
			x+=" -X $pkg.$var"
		done
	done
	mkdir -p "$1/mod"
	k8s_build_module "$1/mod" || return 1
	# -mod=mod: the build resolves k8s.io/kubernetes's requirements into the throwaway go.mod.
	(cd "$1/mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -trimpath -ldflags "-s$x" -o "$1/out/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet) >&2
}

# k8s_build_kwok WORK builds kwok into WORK/out: its go.mod has no replace
# directives, so go install takes the module as it is.
k8s_build_kwok() {
	(cd "$1" && CGO_ENABLED=0 GOBIN="$1/out" nice -n 19 go install -trimpath -ldflags=-s \
		"sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION") >&2
}

# k8s_ensure_binaries builds kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet (K8S_VERSION, into k8s_bin_dir) and kwok
# (KWOK_VERSION, into k8s_kwok_dir) unless they are cached.
k8s_ensure_binaries() {
	k8s_cached "$(k8s_bin_dir)" "Kubernetes $K8S_VERSION" k8s_build_kube
	k8s_cached "$(k8s_kwok_dir)" "kwok $KWOK_VERSION" k8s_build_kwok
}

# k8s_state_dir prints the cluster state of this checkout:
# IDPBENCH_TMP/idpbench-k8s-<cksum of the checkout's path>, the same on every
# run, so a run after a kill -9 finds what the killed one left.
k8s_state_dir() {
	printf '%s/idpbench-k8s-%s\n' "$IDPBENCH_TMP" "$(printf '%s' "$IDPBENCH_ROOT" | cksum | cut -d' ' -f1)"
}

# k8s_record PIDFILE PID writes runstate's pidfile: the pid, then its start
# time (field 22 of /proc/PID/stat, counted after the parenthesised command
# name) and the boot id, by which a later clean knows it is still the same
# process.
k8s_record() {
	local start
	start="$(sed 's/.*) //' "/proc/$2/stat" | cut -d' ' -f20)" || die "process $2 exited at once (its log: $(dirname "$(dirname "$1")")/logs)"
	printf '%s\n%s %s\n' "$2" "$start" "$(</proc/sys/kernel/random/boot_id)" >"$1"
}

# k8s_start STATE NAME CMD... starts CMD in a session (and process group) of
# its own, its output in STATE/logs/NAME.log, and records it in
# STATE/pids/NAME.pid.
k8s_start() {
	local state="$1" name="$2" pid
	shift 2
	# setsid -w: $! lives as long as CMD; disowned: no job report when it is stopped.
	setsid -w "$@" </dev/null >>"$state/logs/$name.log" 2>&1 &
	pid=$!
	disown "$pid"
	k8s_record "$state/pids/$name.pid" "$pid"
}

# k8s_log_end STATE NAME prints the last 3 lines of NAME's log on one line.
k8s_log_end() { tail -n 3 "$1/logs/$2.log" 2>/dev/null | tr '\n' ' '; }

# k8s_wait STATE NAME TIMEOUT_S WHAT CMD... polls CMD (quietly) until it
# succeeds; dies when NAME's process exits first or TIMEOUT_S passes, with
# the end of its log.
k8s_wait() {
	local state="$1" name="$2" timeout="$3" what="$4" deadline
	shift 4
	deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		runstate alive "$state/pids/$name.pid" || die "$name exited before $what: $(k8s_log_end "$state" "$name")"
		((SECONDS < deadline)) || die "$name: not $what within $timeout s: $(k8s_log_end "$state" "$name")"
		sleep 0.5
	done
}

# k8s_cert PKI NAME SUBJECT [SAN] issues PKI/NAME.crt and NAME.key (P-256)
# from the CA in PKI, valid for a day, for server and client use.
k8s_cert() {
	local pki="$1" name="$2" subj="$3" san="${4:-}" ext
	ext="extendedKeyUsage=serverAuth,clientAuth"
	[[ -z "$san" ]] || ext+=$'\n'"subjectAltName=$san"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subj" \
		-keyout "$pki/$name.key" -out "$pki/$name.csr" 2>/dev/null
	openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
		-days 1 -extfile <(printf '%s\n' "$ext") -out "$pki/$name.crt" 2>/dev/null
	rm -f "$pki/$name.csr"
}

# k8s_pki STATE makes the cluster's certificates in STATE/pki: a CA, the API
# server's serving certificate (127.0.0.1, localhost, the kubernetes
# Service's names and address), a client certificate in system:masters
# (kubectl, the controllers, kwok, the API server to the kubelets) and the
# service-account signing key pair.
k8s_pki() {
	local pki="$1/pki"
	(
		umask 077
		mkdir -p "$pki"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
			-subj /CN=idpbench-k8s-ca -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
		k8s_cert "$pki" apiserver /CN=kube-apiserver \
			IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc
		k8s_cert "$pki" admin /O=system:masters/CN=idpbench-admin
		openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key"
		openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
	) || die "making the cluster's certificates in $pki failed (openssl)"
}

# k8s_kubeconfig STATE NAME SERVER writes STATE/NAME.kubeconfig for the
# client certificate STATE/pki/NAME.crt.
k8s_kubeconfig() {
	local pki="$1/pki"
	cat >"$1/$2.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: idpbench
  cluster: {server: "$3", certificate-authority: "$pki/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$pki/$2.crt", client-key: "$pki/$2.key"}
contexts:
- name: idpbench
  context: {cluster: idpbench, user: $2}
current-context: idpbench
EOF
}

# k8s_up STATE: claims STATE (stopping what a killed session left there),
# starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
# free 127.0.0.1 ports, exports KUBECONFIG (STATE/admin.kubeconfig) and
# returns once the API server is ready and the default ServiceAccount
# exists (the controllers work). Dies naming what did not start, with the
# end of its log. The caller's cleanup calls k8s_down STATE.
k8s_up() {
	local state="$1" bin pki etcd peer api
	ensure_pkg etcd etcd-server
	require_cmd openssl kubectl jq setsid
	k8s_ensure_binaries
	bin="$(k8s_bin_dir)"
	runstate claim --owner "$$" "$state" || die "cannot claim the cluster state $state (above)"
	runstate clean "$state" || die "cannot clean what an earlier cluster left in $state (above)"
	k8s_host_clean "$state"
	mkdir -p "$state/pids" "$state/logs"
	k8s_pki "$state"
	pki="$state/pki"
	etcd="$(free_port)" peer="$(free_port)" api="$(free_port)"
	k8s_kubeconfig "$state" admin "https://127.0.0.1:$api"
	export KUBECONFIG="$state/admin.kubeconfig"

	log "starting etcd ($(etcd --version | awk '/^etcd Version/ { print $3 }')) on 127.0.0.1:$etcd"
	k8s_start "$state" etcd etcd --name idpbench --data-dir "$state/etcd" \
		--listen-client-urls "http://127.0.0.1:$etcd" --advertise-client-urls "http://127.0.0.1:$etcd" \
		--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "idpbench=http://127.0.0.1:$peer" --initial-cluster-state new
	k8s_wait "$state" etcd 30 "answering" curl -fsS --max-time 2 "http://127.0.0.1:$etcd/health"

	log "starting kube-apiserver $K8S_VERSION on https://127.0.0.1:$api"
	# --endpoint-reconciler-type none: the kubernetes Service's endpoint
	# would be 127.0.0.1, which the reconciler refuses (a loopback address).
	k8s_start "$state" kube-apiserver "$bin/kube-apiserver" \
		--etcd-servers "http://127.0.0.1:$etcd" --bind-address 127.0.0.1 --secure-port "$api" \
		--advertise-address 127.0.0.1 --endpoint-reconciler-type none --cert-dir "$pki" \
		--service-cluster-ip-range 10.96.0.0/24 --authorization-mode Node,RBAC \
		--client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
		--kubelet-preferred-address-types InternalIP,Hostname \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
		--allow-privileged=false --profiling=false
	k8s_wait "$state" kube-apiserver 120 "ready" kubectl get --raw /readyz

	log "starting kube-controller-manager and kube-scheduler"
	k8s_start "$state" kube-controller-manager "$bin/kube-controller-manager" \
		--kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
		--bind-address 127.0.0.1 --secure-port "$(free_port)" --cert-dir "$state/kcm" --leader-elect=false \
		--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
		--use-service-account-credentials=false --profiling=false
	k8s_start "$state" kube-scheduler "$bin/kube-scheduler" \
		--kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
		--bind-address 127.0.0.1 --secure-port "$(free_port)" --cert-dir "$state/scheduler" --leader-elect=false \
		--profiling=false
	k8s_wait "$state" kube-controller-manager 60 "making the default ServiceAccount" \
		kubectl --namespace default get serviceaccount default
	runstate alive "$state/pids/kube-scheduler.pid" || die "kube-scheduler exited: $(k8s_log_end "$state" kube-scheduler)"
	log "control plane up: $(kubectl version -o json | jq -r .serverVersion.gitVersion) at https://127.0.0.1:$api"
}

# k8s_kwok_stages SRC prints kwok's own Stages (in its module, SRC), a YAML
# document each: for nodes (initialize, heartbeat with a lease) and for
# pods (ready once bound, delete). A simulated pod runs until it is deleted.
k8s_kwok_stages() {
	local f
	for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease pod/fast/pod-ready pod/fast/pod-delete; do
		printf -- '---\n'
		cat "$1/kustomize/stage/$f.yaml"
	done
}

# k8s_kwok_up STATE NODE... starts kwok (KWOK_VERSION) managing the nodes
# annotated kwok.x-k8s.io/node=fake with k8s_kwok_stages, creates NODE...
# so annotated and returns once every one is Ready: nodes for pods that
# must be there and need not run (the IdP's, which the agents keep away
# from).
k8s_kwok_up() {
	local state="$1" src node
	shift
	src="$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | jq -r .Dir)" ||
		die "cannot download sigs.k8s.io/kwok@$KWOK_VERSION for its Stages"
	mkdir -p "$state/kwok"
	k8s_kwok_stages "$src" >"$state/kwok/stages.yaml"
	log "starting kwok $KWOK_VERSION for the simulated nodes: $*"
	k8s_start "$state" kwok "$(k8s_kwok_dir)/kwok" --kubeconfig "$KUBECONFIG" --config "$state/kwok/stages.yaml" \
		--manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-lease-duration-seconds 40 --cidr 10.245.0.0/16
	for node in "$@"; do
		kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $node, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
EOF
	done
	k8s_wait "$state" kwok 60 "making the nodes Ready" kubectl wait --for condition=Ready --timeout 2s node "$@"
}

# --- real nodes: a kubelet and a containerd of its own each ------------------
# Node NAME is a loopback address, 127.0.0.2 and up: the kubelet listens
# there, and the node's InternalIP, which the API server dials for kubectl
# logs, is its name (a kubelet refuses --node-ip 127.x, "nodeIP can't be
# loopback address", but takes a node name that is an IP as its address).
# Each kubelet has a containerd of its own (two kubelets on one runtime kill
# each other's pods as unknown): STATE/NAME holds both, marked as an engine
# (runstate stops it, its shims and containers, and unmounts what is under
# it: the pods' volumes and network namespaces). Outside STATE: the pods'
# cgroups under k8s_cgroup_root in every hierarchy and the CNI bridge
# k8s_bridge, which k8s_host_clean removes.

# k8s_tag STATE prints the cksum in STATE's name (k8s_state_dir): what the
# cgroups and bridges of this checkout's nodes are named by.
k8s_tag() { basename "$1" | sed 's/^idpbench-k8s-//'; }

# k8s_cgroup_root STATE NAME and k8s_bridge STATE NAME print node NAME's
# kubelet cgroupRoot and CNI bridge (at most 15 characters).
k8s_cgroup_root() { printf '/idpbench-k8s-%s-%s\n' "$(k8s_tag "$1")" "${2##*.}"; }
k8s_bridge() { printf '%s%s\n' "$(k8s_bridge_prefix "$1")" "${2##*.}"; }
k8s_bridge_prefix() {
	local tag
	tag="$(k8s_tag "$1")"
	printf 'idpk%s\n' "${tag: -6}"
}

# k8s_host_clean STATE removes what the nodes of STATE left outside it,
# once their kubelets and containerds are stopped: the cgroups under
# /idpbench-k8s-TAG-* (empty by then; deepest first) and the bridges
# k8s_bridge_prefix*; says what it removed.
k8s_host_clean() {
	local tag dir link
	tag="$(k8s_tag "$1")"
	for dir in /sys/fs/cgroup/*/idpbench-k8s-"$tag"-*; do
		[[ -d "$dir" ]] || continue
		find "$dir" -depth -type d -exec rmdir {} + || die "cannot remove the cgroup $dir a node left (a process in it?)"
		log "removed the cgroup $dir"
	done
	for link in $(ip -o link show type bridge | awk -F': ' '{ print $2 }' | grep "^$(k8s_bridge_prefix "$1")" || true); do
		ip link del "$link" || die "cannot remove the bridge $link a node left"
		log "removed the bridge $link"
	done
}

# k8s_node_install makes sure of what a node runs on, installing the OS
# packages as root when missing: containerd (and its ctr), runc and the CNI
# plugins (containernetworking-plugins, in /usr/lib/cni: not on PATH, so
# not by ensure_pkg).
k8s_node_install() {
	ensure_pkg containerd containerd --no-install-recommends
	ensure_pkg runc runc --no-install-recommends
	require_cmd containerd ctr runc nsenter ip
	[[ ! -x /usr/lib/cni/bridge || ! -x /usr/lib/cni/host-local ]] || return 0
	[[ $(id -u) -eq 0 ]] || die "/usr/lib/cni/bridge is missing: install the OS package containernetworking-plugins"
	log "installing containernetworking-plugins from the OS packages"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends containernetworking-plugins >&2
}

# k8s_node_up STATE NAME IMAGES_TAR [PORT PODRUN] starts node NAME
# (127.0.0.N): its containerd (CRI on, images from IMAGES_TAR imported:
# nothing is pulled; the sandbox image is localhost/pause:test, which
# IMAGES_TAR must hold), then its kubelet, and returns once the node is
# Ready. With PORT, every pod of the node has nginx on 127.0.0.1:PORT in its
# network namespace before its containers start (k8s-cni-target.sh; PODRUN
# writes its config), its access log STATE/targets/SANDBOX_ID/access.log.
k8s_node_up() {
	local state="$1" name="$2" dir="$1/$2" sock p
	k8s_node_install
	sock="$dir/containerd.sock"
	mkdir -p "$dir/cni/net.d" "$dir/cni/bin" "$dir/kubelet" "$dir/pod-logs"
	for p in bridge host-local loopback; do ln -sf "/usr/lib/cni/$p" "$dir/cni/bin/$p"; done
	ln -sf "$IDPBENCH_ROOT/scripts/lib/k8s-cni-target.sh" "$dir/cni/bin/idpbench-target"
	printf '%s\n' "a node's containerd of scripts/lib/k8s.sh" >"$dir/engine"
	k8s_containerd_config "$state" "$name" >"$dir/containerd.toml"
	k8s_cni_config "$state" "$name" "${4:-}" "${5:-}" >"$dir/cni/net.d/10-idpbench.conflist"
	k8s_start "$state" "containerd-$name" containerd --config "$dir/containerd.toml"
	k8s_wait "$state" "containerd-$name" 20 "serving" test -S "$sock"
	ctr --address "$sock" --namespace k8s.io images import "$3" >/dev/null ||
		die "cannot import the images into node $name's containerd"
	k8s_cgroup_make "$(k8s_cgroup_root "$state" "$name")"
	k8s_kubelet_config "$state" "$name" >"$dir/kubelet.yaml"
	log "starting kubelet $K8S_VERSION as node $name (containerd $(containerd --version | cut -d' ' -f3))"
	k8s_start "$state" "kubelet-$name" "$(k8s_bin_dir)/kubelet" --config "$dir/kubelet.yaml" \
		--kubeconfig "$KUBECONFIG" --root-dir "$dir/kubelet" --cert-dir "$dir/kubelet/pki" --hostname-override "$name"
	k8s_wait "$state" "kubelet-$name" 60 "Ready" kubectl wait --for condition=Ready --timeout 2s "node/$name"
}

# k8s_cgroup_make ROOT makes the cgroup ROOT in every hierarchy (a kubelet
# refuses a cgroupRoot that is missing from one), its cpuset the whole
# machine's (a new cgroup v1 cpuset has none).
k8s_cgroup_make() {
	local h
	for h in /sys/fs/cgroup/*/; do
		mkdir -p "$h${1#/}" || die "cannot make the cgroup $h${1#/}"
	done
	if [[ -e /sys/fs/cgroup/cpuset/cpuset.cpus ]]; then
		cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset$1/cpuset.cpus"
		cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset$1/cpuset.mems"
	fi
}

# k8s_containerd_config STATE NAME prints node NAME's containerd config:
# every path under STATE/NAME (the pods' network namespaces too), the CRI
# plugin on. restrict_oom_score_adj: root here may not lower an
# oom_score_adj (writing -998, the sandbox's, to /proc/self/oom_score_adj
# is refused), and without it runc fails every sandbox ("can't get final
# child's PID from pipe: EOF").
k8s_containerd_config() {
	local dir="$1/$2"
	cat <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt"]
[grpc]
  address = "$dir/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:test"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$dir/cni/bin"
    conf_dir = "$dir/cni/net.d"
EOF
}

# k8s_cni_config STATE NAME [PORT PODRUN] prints node NAME's CNI network: a
# bridge of its own (k8s_bridge) without an address on the host, no
# gateway, no masquerade: a pod reaches the pods of its node and its own
# loopback, nothing else (containerd 1.6 wants an eth0 in every sandbox);
# with PORT, k8s-cni-target.sh chained after it.
k8s_cni_config() {
	local target=""
	[[ -z "${3:-}" ]] || target=", {\"type\": \"idpbench-target\", \"state\": \"$1\", \"port\": $3, \"podrun\": \"$4\"}"
	cat <<EOF
{"cniVersion": "0.4.0", "name": "idpbench", "plugins": [{"type": "bridge", "bridge": "$(k8s_bridge "$1" "$2")",
  "isGateway": false, "ipMasq": false,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.${2##*.}.0/24"}]], "dataDir": "$1/$2/cni/ipam"}}$target]}
EOF
}

# k8s_kubelet_config STATE NAME prints node NAME's KubeletConfiguration:
# listening on NAME only, clients by the cluster's CA, authorised by the
# API server; cgroupfs under k8s_cgroup_root; failCgroupV1 false (this
# machine has cgroup v1; v1.35 and later refuse it by default).
k8s_kubelet_config() {
	local pki="$1/pki" dir="$1/$2"
	cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $2
port: $(free_port)
readOnlyPort: 0
healthzBindAddress: $2
healthzPort: $(free_port)
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: "$pki/ca.crt"}}
authorization: {mode: Webhook}
tlsCertFile: "$pki/admin.crt"
tlsPrivateKeyFile: "$pki/admin.key"
cgroupDriver: cgroupfs
cgroupRoot: $(k8s_cgroup_root "$1" "$2")
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$dir/containerd.sock
podLogsDir: $dir/pod-logs
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
EOF
}

# k8s_pod_netns STATE NODE POD prints the network namespace (a file under
# STATE/NODE) of POD's sandbox on NODE, or nothing while it has none.
k8s_pod_netns() {
	local sock="$1/$2/containerd.sock" id
	id="$(ctr --address "$sock" --namespace k8s.io containers list --quiet \
		"labels.\"io.kubernetes.pod.name\"==$3,labels.\"io.cri-containerd.kind\"==sandbox" | head -n1)"
	[[ -n "$id" ]] || return 0
	ctr --address "$sock" --namespace k8s.io containers info "$id" |
		jq -r '.Spec.linux.namespaces[] | select(.type == "network") | .path // empty'
}

# k8s_down STATE stops every process STATE records (its process group),
# the API server's clients first and etcd last, and deletes STATE; nothing to do when STATE
# does not exist, and only a warning when a live session other than this
# shell holds it. Dies naming what could not be stopped or removed.
k8s_down() {
	local state="$1" owner f
	[[ -e "$state" ]] || return 0
	owner="$(head -n1 "$state/owner" 2>/dev/null || true)"
	if [[ -n "$owner" && "$owner" != "$$" ]] && runstate alive "$state/owner"; then
		warn "not stopping the cluster in $state: a live session (pid $owner) holds it"
		return 0
	fi
	log "stopping the cluster in $state"
	# The kubelets, kwok and nginx first (a kubelet left running would mount
	# its pods' volumes again), then the rest, the API server and etcd last
	# (an API server without its etcd takes 20 s to give up); then the
	# nodes' containerds as engines, with their shims and containers.
	for f in "$state"/pids/kubelet-*.pid "$state"/pids/kwok.pid "$state"/pids/nginx-*.pid "$state"/pids/*.pid; do
		[[ -e "$f" ]] || continue
		case "$(basename "$f" .pid)" in etcd | kube-apiserver) continue ;; esac
		runstate stop-group --timeout 20s "$f" || die "cannot stop $(basename "$f" .pid) of the cluster in $state (above)"
	done
	[[ ! -e "$state/pids/kube-apiserver.pid" ]] || runstate stop-group --timeout 20s "$state/pids/kube-apiserver.pid" ||
		die "cannot stop the API server of the cluster in $state (above)"
	runstate stop "$state" || die "the cluster in $state could not be stopped (above)"
	k8s_host_clean "$state"
	runstate release "$state" || die "cannot delete the cluster state $state"
}
