package compose

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// problem is one failed check, named by file, service and key.
type problem struct {
	rule, file, service, key, msg string
}

func (p problem) String() string {
	return fmt.Sprintf("%s: service %q: %s: %s [%s]", p.file, p.service, p.key, p.msg, p.rule)
}

// rule checks one service of a project.
type rule struct {
	name  string
	check func(p project, name string, s service) []problem
}

// rules are the static checks every service of every compose file passes.
var rules = []rule{
	{"image", checkImage},
	{"healthcheck", checkHealthcheck},
	{"ports", checkPorts},
	{"container_name", checkContainerName},
	{"memory", checkMemory},
	{"secrets", checkSecrets},
	{"depends_on", checkDependsOn},
}

// checkProject runs every rule on every service.
func checkProject(p project) []problem {
	var out []problem
	for _, name := range p.Names() {
		out = append(out, checkService(p, name)...)
	}
	return out
}

func checkService(p project, name string) []problem {
	var out []problem
	for _, r := range rules {
		for _, pr := range r.check(p, name, p.Services[name]) {
			pr.rule, pr.file, pr.service = r.name, p.File, name
			out = append(out, pr)
		}
	}
	return out
}

var (
	// An exact version: major.minor at least (PostgreSQL's versions have two
	// parts), then more parts and a suffix (15.18-bookworm, 26.7.3-optimized).
	exactTag = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)*(-[0-9A-Za-z][0-9A-Za-z.-]*)?$`)
	digestRe = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// splitImage splits "repo:tag@digest" into its parts; the tag is after the
// last colon that follows the last slash (a registry may carry a port).
func splitImage(ref string) (repo, tag, digest string) {
	ref, digest, _ = strings.Cut(ref, "@")
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		return ref[:colon], ref[colon+1:], digest
	}
	return ref, "", digest
}

func checkImage(_ project, _ string, s service) []problem {
	bad := func(msg string) []problem { return []problem{{key: "image", msg: msg}} }
	// ${IDPBENCH_IMAGE_NAME:-REF}: the pin rules hold for REF, the default.
	image := s.DefaultImage()
	switch {
	case image == "":
		return bad("missing")
	case strings.Contains(image, "$"):
		return bad(fmt.Sprintf("%q is interpolated; pin it literally, or as ${IDPBENCH_IMAGE_NAME:-IMAGE}", s.Image))
	}
	_, tag, digest := splitImage(image)
	switch {
	case digest != "" && !digestRe.MatchString(digest):
		return bad(fmt.Sprintf("%q: malformed digest", image))
	case tag == "":
		return bad(fmt.Sprintf("%q has no tag", image))
	case tag == "latest":
		return bad(fmt.Sprintf("%q uses latest", image))
	case !exactTag.MatchString(tag):
		return bad(fmt.Sprintf("%q: tag %q is not an exact version", image, tag))
	}
	return nil
}

// oneShot reports whether another service waits for name to complete: a
// job (a database migration) that exits, for which a health check has no
// meaning.
func oneShot(p project, name string) bool {
	for other, s := range p.Services {
		if other != name && s.Dependencies()[name] == "service_completed_successfully" {
			return true
		}
	}
	return false
}

func checkHealthcheck(p project, name string, s service) []problem {
	if oneShot(p, name) {
		return nil
	}
	h := s.Healthcheck
	if h == nil {
		return []problem{{key: "healthcheck", msg: "missing"}}
	}
	var out []problem
	test := fmt.Sprint(h.Test)
	if h.Disable || h.Test == nil || test == "[]" || strings.HasPrefix(test, "[NONE") {
		out = append(out, problem{key: "healthcheck.test", msg: "missing or disabled"})
	}
	if h.Interval == "" {
		out = append(out, problem{key: "healthcheck.interval", msg: "missing"})
	}
	if h.Retries <= 0 {
		out = append(out, problem{key: "healthcheck.retries", msg: "missing or not positive"})
	}
	return out
}

func checkPorts(_ project, _ string, s service) []problem {
	var out []problem
	if s.NetworkMode == "host" {
		out = append(out, problem{key: "network_mode", msg: "host networking publishes on every interface"})
	}
	for i, port := range s.Ports {
		key := fmt.Sprintf("ports[%d]", i)
		switch v := port.(type) {
		case string:
			if !strings.HasPrefix(v, "127.0.0.1:") {
				out = append(out, problem{key: key, msg: fmt.Sprintf("%q is not bound to 127.0.0.1", v)})
			}
		case map[string]any:
			if ip, _ := v["host_ip"].(string); ip != "127.0.0.1" {
				out = append(out, problem{key: key + ".host_ip", msg: fmt.Sprintf("%q, want 127.0.0.1", ip)})
			}
		default:
			out = append(out, problem{key: key, msg: fmt.Sprintf("%v is not bound to 127.0.0.1", v)})
		}
	}
	return out
}

func checkContainerName(_ project, _ string, s service) []problem {
	if !strings.HasPrefix(s.ContainerName, "idpbench-") {
		return []problem{{key: "container_name", msg: fmt.Sprintf("%q lacks the idpbench- prefix (sampler --docker 'idpbench-*')", s.ContainerName)}}
	}
	return nil
}

var memoryRe = regexp.MustCompile(`^\d+(\.\d+)?[kKmMgG]?[bB]?$`)

func checkMemory(_ project, _ string, s service) []problem {
	m := s.Memory()
	if m == "" {
		return []problem{{key: "deploy.resources.limits.memory", msg: "missing (or mem_limit)"}}
	}
	if !memoryRe.MatchString(m) {
		return []problem{{key: "deploy.resources.limits.memory", msg: fmt.Sprintf("%q is not a size", m)}}
	}
	return nil
}

var (
	secretKey = regexp.MustCompile(`(?i)PASSWORD|SECRET|MASTERKEY|TOKEN`)
	// A secret is a reference to a variable the user sets: ${VAR}, or
	// ${VAR:?message}; a default (${VAR:-x}) would be a literal secret.
	secretRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(:?\?[^}]*)?\}$`)
	// settings whose names look secret but hold an enumerated value; the
	// value must match, so no secret can hide under such a name.
	notSecret = map[string]*regexp.Regexp{
		"STRATEGIES_ACCESS_TOKEN": regexp.MustCompile(`^(opaque|jwt)$`), // Hydra's access token format
	}
	// userinfo in a URL: scheme://user:password@
	urlPassword = regexp.MustCompile(`://[^/@:\s]+:([^@\s]*)@`)
)

func checkSecrets(_ project, _ string, s service) []problem {
	var out []problem
	env := s.Env()
	for _, k := range sortedKeys(env) {
		v, key := env[k], "environment."+k
		if re, ok := notSecret[k]; ok && re.MatchString(v) {
			continue
		}
		if secretKey.MatchString(k) && !secretRef.MatchString(v) {
			out = append(out, problem{key: key, msg: "a literal value; use a ${VAR} reference set in .env"})
		}
		if m := urlPassword.FindStringSubmatch(v); m != nil && !secretRef.MatchString(m[1]) {
			out = append(out, problem{key: key, msg: "URL with a literal password; use a ${VAR} reference"})
		}
	}
	return append(out, commandSecrets(s.Args())...)
}

// commandSecrets finds secret-looking flags given a literal value in argv
// (--masterkey X, --password=X); value-less flags like --masterkeyFromEnv pass.
func commandSecrets(args []string) []problem {
	var out []problem
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !secretKey.MatchString(flag) {
			continue
		}
		if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			val, hasVal = args[i+1], true
		}
		if hasVal && !secretRef.MatchString(val) {
			out = append(out, problem{key: "command", msg: fmt.Sprintf("%s takes a literal secret in argv", a)})
		}
	}
	return out
}

func checkDependsOn(p project, _ string, s service) []problem {
	if _, isList := s.DependsOn.([]any); isList {
		return []problem{{key: "depends_on", msg: "list form has no condition; use condition: service_healthy"}}
	}
	var out []problem
	deps := s.Dependencies()
	for _, dep := range sortedKeys(deps) {
		cond, key := deps[dep], "depends_on."+dep
		target, ok := p.Services[dep]
		switch {
		case !ok:
			out = append(out, problem{key: key, msg: "no such service"})
		case cond == "service_completed_successfully":
		case cond != "service_healthy":
			out = append(out, problem{key: key + ".condition", msg: fmt.Sprintf("%q, want service_healthy", cond)})
		case target.Healthcheck == nil:
			out = append(out, problem{key: key, msg: "service_healthy on a service without a health check"})
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
