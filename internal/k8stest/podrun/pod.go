package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The parts of a Pod (as the API server returns it, defaults applied) that
// the agents' pods use. Anything else a pod asks for that changes how its
// container runs is refused by dockerArgs, never ignored.
type (
	pod struct {
		Metadata struct {
			Name        string            `json:"name"`
			Namespace   string            `json:"namespace"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			NodeName        string            `json:"nodeName"`
			HostNetwork     bool              `json:"hostNetwork"`
			InitContainers  []json.RawMessage `json:"initContainers"`
			Containers      []container       `json:"containers"`
			Volumes         []volume          `json:"volumes"`
			SecurityContext struct {
				RunAsUser    *int64 `json:"runAsUser"`
				RunAsGroup   *int64 `json:"runAsGroup"`
				FSGroup      *int64 `json:"fsGroup"`
				RunAsNonRoot *bool  `json:"runAsNonRoot"`
			} `json:"securityContext"`
		} `json:"spec"`
	}
	container struct {
		Name      string   `json:"name"`
		Image     string   `json:"image"`
		Command   []string `json:"command"`
		Args      []string `json:"args"`
		Env       []envVar `json:"env"`
		EnvFrom   []any    `json:"envFrom"`
		Resources struct {
			Limits map[string]string `json:"limits"`
		} `json:"resources"`
		SecurityContext struct {
			RunAsUser                *int64 `json:"runAsUser"`
			ReadOnlyRootFilesystem   bool   `json:"readOnlyRootFilesystem"`
			AllowPrivilegeEscalation *bool  `json:"allowPrivilegeEscalation"`
			Privileged               bool   `json:"privileged"`
			Capabilities             struct {
				Add  []string `json:"add"`
				Drop []string `json:"drop"`
			} `json:"capabilities"`
		} `json:"securityContext"`
		VolumeMounts []struct {
			Name      string `json:"name"`
			MountPath string `json:"mountPath"`
			ReadOnly  bool   `json:"readOnly"`
			SubPath   string `json:"subPath"`
		} `json:"volumeMounts"`
	}
	envVar struct {
		Name      string `json:"name"`
		Value     string `json:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `json:"fieldPath"`
			} `json:"fieldRef"`
			ResourceFieldRef *struct {
				Resource string `json:"resource"`
				Divisor  string `json:"divisor"`
			} `json:"resourceFieldRef"`
			SecretKeyRef    any `json:"secretKeyRef"`
			ConfigMapKeyRef any `json:"configMapKeyRef"`
		} `json:"valueFrom"`
	}
	volume struct {
		Name   string `json:"name"`
		Secret *struct {
			SecretName  string `json:"secretName"`
			DefaultMode *int32 `json:"defaultMode"`
		} `json:"secret"`
		EmptyDir *struct {
			Medium    string `json:"medium"`
			SizeLimit string `json:"sizeLimit"`
		} `json:"emptyDir"`
	}
	// secret is a Secret as the API server returns it: data base64.
	secret struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
)

// containerLabel and namespaceLabel are the labels dockerArgs puts on the
// container, naming its pod (the kubelet's dockershim used the same).
const (
	podLabel       = "io.kubernetes.pod.name"
	namespaceLabel = "io.kubernetes.pod.namespace"
)

// dockerArgs is `docker run`'s arguments (after "run") for p's one
// container, as the kubelet would run it: the pod's user, group and
// fsGroup, its container's security settings, CPU and memory limits,
// environment ($(VAR) expanded as the kubelet does), the Secret volume's
// files written under dir (writeSecret) and bind-mounted, an emptyDir as
// a tmpfs, the command and arguments; on network, docker run's --network
// (the pod's sandbox: container:NAME). s is the Secret the pod's secret
// volume names.
func dockerArgs(p pod, s secret, dir, network string) ([]string, error) {
	if err := supported(p); err != nil {
		return nil, err
	}
	c := p.Spec.Containers[0]
	args := []string{"--detach", "--pull", "never", "--name", "k8s_" + p.Metadata.Namespace + "_" + p.Metadata.Name,
		"--label", podLabel + "=" + p.Metadata.Name, "--label", namespaceLabel + "=" + p.Metadata.Namespace,
		"--network", network}
	user, err := userArgs(p, c)
	if err != nil {
		return nil, err
	}
	args = append(args, user...)
	if c.SecurityContext.ReadOnlyRootFilesystem {
		args = append(args, "--read-only")
	}
	if e := c.SecurityContext.AllowPrivilegeEscalation; e != nil && !*e {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	for _, d := range c.SecurityContext.Capabilities.Drop {
		args = append(args, "--cap-drop", d)
	}
	limits, err := limitArgs(c)
	if err != nil {
		return nil, err
	}
	args = append(args, limits...)
	env, err := environment(p, c)
	if err != nil {
		return nil, err
	}
	for _, e := range env {
		args = append(args, "--env", e.name+"="+e.value)
	}
	mounts, err := mountArgs(p, c, s, dir)
	if err != nil {
		return nil, err
	}
	args = append(args, mounts...)
	vars := map[string]string{}
	for _, e := range env {
		vars[e.name] = e.value
	}
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("container %s: no command: the stand-in runs the pod's command, never the image's entry point", c.Name)
	}
	args = append(args, "--entrypoint", expand(c.Command[0], vars), c.Image)
	for _, a := range append(slices.Clone(c.Command[1:]), c.Args...) {
		args = append(args, expand(a, vars))
	}
	return args, nil
}

// supported refuses what the stand-in does not do as the kubelet would.
func supported(p pod) error {
	switch {
	case len(p.Spec.Containers) != 1:
		return fmt.Errorf("pod %s: %d containers, want 1", p.Metadata.Name, len(p.Spec.Containers))
	case len(p.Spec.InitContainers) > 0:
		return fmt.Errorf("pod %s: init containers are not run here", p.Metadata.Name)
	case p.Spec.NodeName == "":
		return fmt.Errorf("pod %s: not scheduled (no spec.nodeName)", p.Metadata.Name)
	}
	c := p.Spec.Containers[0]
	switch {
	case len(c.EnvFrom) > 0:
		return fmt.Errorf("container %s: envFrom is not supported here", c.Name)
	case c.SecurityContext.Privileged || len(c.SecurityContext.Capabilities.Add) > 0:
		return fmt.Errorf("container %s: privileges or added capabilities are not granted here", c.Name)
	}
	return nil
}

// userArgs: --user UID:GID and the fsGroup as a supplementary group; a
// pod that must not run as root and names no user is refused (the image's
// user is not known here).
func userArgs(p pod, c container) ([]string, error) {
	sc := p.Spec.SecurityContext
	uid := c.SecurityContext.RunAsUser
	if uid == nil {
		uid = sc.RunAsUser
	}
	if uid == nil {
		return nil, fmt.Errorf("pod %s: no runAsUser: the image's user is not known here", p.Metadata.Name)
	}
	if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && *uid == 0 {
		return nil, fmt.Errorf("pod %s: runAsNonRoot with runAsUser 0", p.Metadata.Name)
	}
	user := strconv.FormatInt(*uid, 10)
	if sc.RunAsGroup != nil {
		user += ":" + strconv.FormatInt(*sc.RunAsGroup, 10)
	}
	args := []string{"--user", user}
	if sc.FSGroup != nil {
		args = append(args, "--group-add", strconv.FormatInt(*sc.FSGroup, 10))
	}
	return args, nil
}

// limitArgs: the container's CPU and memory limits as --cpus and --memory.
func limitArgs(c container) ([]string, error) {
	var args []string
	for _, r := range []struct{ name, flag string }{{"cpu", "--cpus"}, {"memory", "--memory"}} {
		q, ok := c.Resources.Limits[r.name]
		if !ok {
			continue
		}
		v, err := quantity(q)
		if err != nil {
			return nil, fmt.Errorf("container %s: limits.%s: %w", c.Name, r.name, err)
		}
		args = append(args, r.flag, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return args, nil
}

// binding is one environment variable, resolved.
type binding struct{ name, value string }

// environment resolves the container's env in order, as the kubelet does:
// a value has $(VAR) of the variables before it expanded; a field
// reference reads the pod's name, namespace, a label or an annotation; a
// resource reference reads a limit, divided by its divisor and rounded up.
func environment(p pod, c container) ([]binding, error) {
	vars := map[string]string{}
	var out []binding
	for _, e := range c.Env {
		v, err := envValue(p, c, e, vars)
		if err != nil {
			return nil, fmt.Errorf("container %s: env %s: %w", c.Name, e.Name, err)
		}
		vars[e.Name] = v
		out = append(out, binding{e.Name, v})
	}
	return out, nil
}

var metaPath = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

func envValue(p pod, c container, e envVar, vars map[string]string) (string, error) {
	f := e.ValueFrom
	switch {
	case f == nil:
		return expand(e.Value, vars), nil
	case f.FieldRef != nil:
		switch path := f.FieldRef.FieldPath; path {
		case "metadata.name":
			return p.Metadata.Name, nil
		case "metadata.namespace":
			return p.Metadata.Namespace, nil
		case "spec.nodeName":
			return p.Spec.NodeName, nil
		default:
			m := metaPath.FindStringSubmatch(path)
			if m == nil {
				return "", fmt.Errorf("fieldRef %s is not supported here", path)
			}
			if m[1] == "labels" {
				return p.Metadata.Labels[m[2]], nil
			}
			return p.Metadata.Annotations[m[2]], nil
		}
	case f.ResourceFieldRef != nil:
		return resourceValue(c, f.ResourceFieldRef.Resource, f.ResourceFieldRef.Divisor)
	}
	return "", fmt.Errorf("only values, fieldRef and resourceFieldRef are supported here (no Secret or ConfigMap keys)")
}

// resourceValue is limits.cpu or limits.memory divided by divisor (default
// 1), rounded up, as the kubelet gives a resourceFieldRef.
func resourceValue(c container, resource, divisor string) (string, error) {
	name, ok := strings.CutPrefix(resource, "limits.")
	q, have := c.Resources.Limits[name]
	if !ok || !have {
		return "", fmt.Errorf("resourceFieldRef %s: only a limit the container sets is supported here", resource)
	}
	v, err := quantity(q)
	if err != nil {
		return "", err
	}
	d := 1.0
	if divisor != "" {
		if d, err = quantity(divisor); err != nil || d == 0 {
			return "", fmt.Errorf("divisor %q: not a quantity above 0", divisor)
		}
	}
	return strconv.FormatFloat(math.Ceil(v/d), 'f', -1, 64), nil
}

var quantityRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)

// quantity parses a Kubernetes quantity of the forms pods use here: a
// number with an optional milli, decimal or binary suffix.
func quantity(q string) (float64, error) {
	m := quantityRe.FindStringSubmatch(q)
	if m == nil {
		return 0, fmt.Errorf("quantity %q: not of the forms supported here (2, 500m, 1Gi, 512M)", q)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	scale := map[string]float64{"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[m[2]]
	return v * scale, nil
}

// expand replaces $(VAR) in s with the variable's value when vars has it
// and $$ with $, leaving any other $(...) as it is: the kubelet's
// expansion of a container's command, arguments and env values.
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if j := strings.IndexByte(s[i+2:], ')'); j >= 0 {
				ref := s[i : i+3+j]
				if v, ok := vars[s[i+2:i+2+j]]; ok {
					ref = v
				}
				b.WriteString(ref)
				i += 2 + j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountArgs: each volume mount of the container. A Secret volume's files
// are written under dir/VOLUME (writeSecret) and bind-mounted; an emptyDir
// is a tmpfs of its size limit, writable by all (the kubelet makes its
// directory 0777).
func mountArgs(p pod, c container, s secret, dir string) ([]string, error) {
	var args []string
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(p.Spec.Volumes, func(v volume) bool { return v.Name == m.Name })
		if i < 0 {
			return nil, fmt.Errorf("container %s: mount of an undeclared volume %s", c.Name, m.Name)
		}
		if m.SubPath != "" {
			return nil, fmt.Errorf("container %s: subPath mounts are not supported here", c.Name)
		}
		switch v := p.Spec.Volumes[i]; {
		case v.Secret != nil:
			if v.Secret.SecretName != s.Metadata.Name {
				return nil, fmt.Errorf("volume %s: Secret %s, but the Secret given is %s", v.Name, v.Secret.SecretName, s.Metadata.Name)
			}
			host := filepath.Join(dir, v.Name)
			if err := writeSecret(host, s, v.Secret.DefaultMode, p.Spec.SecurityContext.FSGroup); err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			// A secret volume is read-only whatever the mount says.
			args = append(args, "--mount", "type=bind,src="+host+",dst="+m.MountPath+",readonly")
		case v.EmptyDir != nil && v.EmptyDir.Medium == "":
			opts := "mode=1777"
			if v.EmptyDir.SizeLimit != "" {
				n, err := quantity(v.EmptyDir.SizeLimit)
				if err != nil {
					return nil, fmt.Errorf("volume %s: sizeLimit: %w", v.Name, err)
				}
				opts += ",size=" + strconv.FormatFloat(n, 'f', 0, 64)
			}
			args = append(args, "--tmpfs", m.MountPath+":"+opts)
		default:
			return nil, fmt.Errorf("volume %s: only Secret and emptyDir volumes are supported here", v.Name)
		}
	}
	return args, nil
}

// writeSecret writes the Secret's keys as files in dir (made 0755): mode
// defaultMode (default 0644); with an fsGroup, owned by root and that group,
// with group read added, as the kubelet sets a volume's ownership.
func writeSecret(dir string, s secret, defaultMode *int32, fsGroup *int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode) & os.ModePerm
	}
	if fsGroup != nil {
		mode |= 0o040
	}
	for key, b64 := range s.Data {
		if key == "" || strings.ContainsAny(key, "/\x00") || key == "." || key == ".." {
			return fmt.Errorf("key %q: not a file name", key)
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return fmt.Errorf("key %s: %w", key, err)
		}
		path := filepath.Join(dir, key)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return err
		}
		if fsGroup != nil {
			if err := os.Chown(path, -1, int(*fsGroup)); err != nil {
				return err
			}
		}
		if err := os.Chmod(path, mode); err != nil {
			return err
		}
	}
	return nil
}
