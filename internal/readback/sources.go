package readback

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/oauthform"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// tokenLifespan asks for a client_credentials token and reads the
// lifespan the product gave it (expires_in, RFC 6749 5.1). The token itself
// is dropped.
func (r *Reader) tokenLifespan(ctx context.Context) error {
	req, err := oauthform.Request(ctx, r.cfg.TokenURL.String(), oauthform.ClientCredentials(r.cfg.Scope),
		oauthform.Client{ID: r.cfg.ClientID, Secret: r.cfg.ClientSecret})
	if err != nil {
		return err
	}
	body, err := r.do(req)
	if err != nil {
		return fmt.Errorf("client_credentials grant for the token lifespan: %w", err)
	}
	var tok struct {
		AccessToken string   `json:"access_token"`
		ExpiresIn   *float64 `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.ExpiresIn == nil {
		return fmt.Errorf("client_credentials grant at %s: no expires_in in the answer", logsafe.URL(r.cfg.TokenURL))
	}
	r.Fact("access token lifespan (client_credentials)", fmt.Sprintf("%.0f s (expires_in of a fresh token)", *tok.ExpiresIn),
		"token endpoint, a client_credentials grant: expires_in")
	format := "opaque (not a JWT)"
	if strings.Count(tok.AccessToken, ".") == 2 {
		format = "JWT"
	}
	r.Fact("access token format", format, "token endpoint, a client_credentials grant: the access token's shape")
	return nil
}

// Metrics fetches and parses the Prometheus text exposition at c.Metrics.
func (r *Reader) Metrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	if err := r.Need("metrics", r.cfg.Metrics == nil); err != nil {
		return nil, err
	}
	body, err := r.Get(ctx, r.cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	return servermetrics.Parse("metrics", bytes.NewReader(body))
}

// Sample is one metric's value with its labels.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples returns the gauge, counter or untyped values of family name
// whose labels include match; an absent family is an error.
func Samples(fams map[string]*dto.MetricFamily, name string, match map[string]string) ([]Sample, error) {
	f := fams[name]
	if f == nil {
		return nil, fmt.Errorf("metric %s: not exposed", name)
	}
	var out []Sample
	for _, m := range f.GetMetric() {
		s := Sample{Labels: map[string]string{}, Value: math.NaN()}
		for _, l := range m.GetLabel() {
			s.Labels[l.GetName()] = l.GetValue()
		}
		if !matches(s.Labels, match) {
			continue
		}
		switch {
		case m.Gauge != nil:
			s.Value = m.GetGauge().GetValue()
		case m.Counter != nil:
			s.Value = m.GetCounter().GetValue()
		case m.Untyped != nil:
			s.Value = m.GetUntyped().GetValue()
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("metric %s%v: no such series", name, match)
	}
	return out, nil
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Sum adds the samples' values; skip drops those it says to.
func Sum(ss []Sample, skip func(float64) bool) float64 {
	t := 0.0
	for _, s := range ss {
		if skip == nil || !skip(s.Value) {
			t += s.Value
		}
	}
	return t
}

// GoModuleVersion reads the version of module path from the Go build info
// of the executable file.
func GoModuleVersion(file, path string) (string, error) {
	bi, err := buildinfo.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the build info of %s: %w", file, err)
	}
	if bi.Main.Path == path {
		return bi.Main.Version, nil
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version, nil
			}
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s: built without module %s", file, path)
}

// MiB renders bytes as MiB.
func MiB(b float64) string {
	return fmt.Sprintf("%.0f MiB (%.0f bytes)", b/(1<<20), b)
}

// JVMFacts reads what Micrometer's JVM binders expose in the scrape fams
// (Keycloak's management /metrics, Spring Boot's actuator): the heap
// maximum (jvm_memory_max_bytes{area="heap"}; G1 reports its young pools'
// max as -1, undefined, so the pools with a defined max add up to -Xmx)
// and, where the scrape has info (jvm_info, or jvm_info_total as
// Keycloak's registry names it), the JVM. where names the endpoint in the
// facts' sources.
func (r *Reader) JVMFacts(fams map[string]*dto.MetricFamily, where, info string) error {
	heap, err := Samples(fams, "jvm_memory_max_bytes", map[string]string{"area": "heap"})
	if err != nil {
		return err
	}
	r.Fact("JVM heap maximum", MiB(Sum(heap, func(v float64) bool { return v < 0 || math.IsNaN(v) })),
		where+": jvm_memory_max_bytes{area=\"heap\"}, the pools with a defined max")
	if s, err := Samples(fams, info, nil); err == nil {
		l := s[0].Labels
		r.Fact("JVM", strings.TrimSpace(l["vendor"]+" "+l["runtime"]+" "+l["version"]), where+": "+info)
	}
	return nil
}
