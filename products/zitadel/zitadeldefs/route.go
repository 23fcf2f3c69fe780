package zitadeldefs

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Field numbers of the option extensions read here, as the package's own
// google/api/annotations.proto and protoc-gen-openapiv2/options/annotations.proto
// declare them (Load checks that they do).
const (
	httpExt    = 72295728 // google.api.http on MethodOptions
	swaggerExt = 1042     // grpc.gateway.protoc_gen_openapiv2.options.openapiv2_swagger on FileOptions
)

// Route is one HTTP binding of a method.
type Route struct {
	Verb         string // GET, POST, PUT, PATCH, DELETE
	Template     string // the full path template, base path included: /v2/sessions/{session_id}
	Body         string // the http rule's body: "" (none), "*" (the whole input) or a field name
	ResponseBody string // the http rule's response_body: "" = the whole output
	Method       protoreflect.MethodDescriptor
	segs         []segment
}

type segment struct {
	lit   string // a literal segment (may be "" after a trailing slash)
	field string // a variable's field path (a.b); "" for a literal
	rest  bool   // a {field=**} variable: the rest of the path, one or more segments
}

// Match is a resolved call: the route and the path variables bound.
type Match struct {
	*Route
	Params map[string]string // field path -> value
}

// ErrNoRoute is returned for a verb and path that no method maps.
var ErrNoRoute = errors.New("no method of the definitions maps this verb and path")

// buildRoutes reads every method's google.api.http option.
func (d *Defs) buildRoutes() error {
	ruleDesc, err := d.message("google.api.HttpRule")
	if err != nil {
		return err
	}
	if err := d.checkExtension("google.api.http", httpExt); err != nil {
		return err
	}
	var errs []error
	d.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		base := d.basePath(fd)
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				md := sd.Methods().Get(j)
				rs, err := methodRoutes(md, ruleDesc, base)
				errs = append(errs, err)
				d.Routes = append(d.Routes, rs...)
			}
		}
		return true
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(d.Routes) == 0 {
		return fmt.Errorf("no method of the %s definitions has a google.api.http option", Package)
	}
	sort.Slice(d.Routes, func(i, j int) bool {
		a, b := d.Routes[i], d.Routes[j]
		return a.Template+" "+a.Verb < b.Template+" "+b.Verb
	})
	return nil
}

func (d *Defs) message(name protoreflect.FullName) (protoreflect.MessageDescriptor, error) {
	desc, err := d.Files.FindDescriptorByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	md, ok := desc.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a message", name)
	}
	return md, nil
}

// checkExtension checks that the package declares name with number num.
func (d *Defs) checkExtension(name protoreflect.FullName, num protoreflect.FieldNumber) error {
	desc, err := d.Files.FindDescriptorByName(name)
	if err != nil {
		return fmt.Errorf("extension %s: %w", name, err)
	}
	if xd, ok := desc.(protoreflect.ExtensionDescriptor); !ok || xd.Number() != num {
		return fmt.Errorf("extension %s is not field %d", name, num)
	}
	return nil
}

// unknownExt returns the message-typed option extension num of opts,
// decoded as desc (nil when opts lack it).
func unknownExt(opts proto.Message, num protowire.Number, desc protoreflect.MessageDescriptor) (*dynamicpb.Message, error) {
	if opts == nil {
		return nil, nil
	}
	raw := opts.ProtoReflect().GetUnknown()
	var out *dynamicpb.Message
	for len(raw) > 0 {
		n, typ, l := protowire.ConsumeTag(raw)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		raw = raw[l:]
		vl := protowire.ConsumeFieldValue(n, typ, raw)
		if vl < 0 {
			return nil, protowire.ParseError(vl)
		}
		if n == num && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(raw)
			if out == nil {
				out = dynamicpb.NewMessage(desc)
			}
			// Repeated occurrences of a message field merge.
			if err := proto.Unmarshal(v, out); err != nil {
				return nil, err
			}
		}
		raw = raw[vl:]
	}
	return out, nil
}

// basePath is the path prefix a file's services are mounted at: the v1
// APIs' http rules are relative ("/orgs/me"), and Zitadel serves them below
// the openapiv2_swagger option's base_path ("/management/v1"). v2 rules
// carry their full path and their files no base path.
func (d *Defs) basePath(fd protoreflect.FileDescriptor) string {
	sw, err := d.message("grpc.gateway.protoc_gen_openapiv2.options.Swagger")
	if err != nil {
		return ""
	}
	m, err := unknownExt(fd.Options(), swaggerExt, sw)
	if err != nil || m == nil {
		return ""
	}
	return strings.TrimRight(m.Get(sw.Fields().ByName("base_path")).String(), "/")
}

func methodRoutes(md protoreflect.MethodDescriptor, ruleDesc protoreflect.MessageDescriptor, base string) ([]*Route, error) {
	rule, err := unknownExt(md.Options(), httpExt, ruleDesc)
	if err != nil {
		return nil, fmt.Errorf("%s: google.api.http: %w", md.FullName(), err)
	}
	if rule == nil {
		return nil, nil // a gRPC-only method
	}
	var out []*Route
	for _, r := range append([]*dynamicpb.Message{rule}, additional(rule)...) {
		rt, err := newRoute(md, r, base)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", md.FullName(), err)
		}
		out = append(out, rt)
	}
	return out, nil
}

func additional(rule *dynamicpb.Message) []*dynamicpb.Message {
	l := rule.Get(rule.Descriptor().Fields().ByName("additional_bindings")).List()
	var out []*dynamicpb.Message
	for i := 0; i < l.Len(); i++ {
		out = append(out, l.Get(i).Message().Interface().(*dynamicpb.Message))
	}
	return out
}

func newRoute(md protoreflect.MethodDescriptor, rule *dynamicpb.Message, base string) (*Route, error) {
	fields := rule.Descriptor().Fields()
	rt := &Route{Method: md,
		Body:         rule.Get(fields.ByName("body")).String(),
		ResponseBody: rule.Get(fields.ByName("response_body")).String()}
	var path string
	for _, verb := range []string{"get", "put", "post", "delete", "patch"} {
		if f := fields.ByName(protoreflect.Name(verb)); rule.Has(f) {
			rt.Verb, path = strings.ToUpper(verb), rule.Get(f).String()
		}
	}
	if rt.Verb == "" {
		return nil, fmt.Errorf("http rule without a standard verb (custom patterns are not used by Zitadel)")
	}
	rt.Template = base + path
	segs, err := parseTemplate(rt.Template)
	if err != nil {
		return nil, err
	}
	rt.segs = segs
	for _, s := range segs {
		if s.field != "" && fieldByPath(md.Input(), s.field) == nil {
			return nil, fmt.Errorf("path %s binds %s, which %s lacks", rt.Template, s.field, md.Input().FullName())
		}
	}
	if rt.Body != "" && rt.Body != "*" && md.Input().Fields().ByName(protoreflect.Name(rt.Body)) == nil {
		return nil, fmt.Errorf("body %s is no field of %s", rt.Body, md.Input().FullName())
	}
	return rt, nil
}

// parseTemplate reads the path templates Zitadel uses: literal segments,
// single-segment variables {field} ({field=*}) and a trailing {field=**}.
// Anything else (verbs, nested patterns) is refused, so that a new form
// shows up instead of being matched wrongly.
func parseTemplate(t string) ([]segment, error) {
	if !strings.HasPrefix(t, "/") {
		return nil, fmt.Errorf("path template %q does not start with /", t)
	}
	parts := strings.Split(t[1:], "/")
	var segs []segment
	for i, p := range parts {
		last := i == len(parts)-1
		switch {
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
			f, pat, _ := strings.Cut(p[1:len(p)-1], "=")
			rest := pat == "**"
			if f == "" || strings.ContainsAny(f, "*{}") || (pat != "" && pat != "*" && !rest) || (rest && !last) {
				return nil, fmt.Errorf("path template %q: variable %q not supported", t, p)
			}
			segs = append(segs, segment{field: f, rest: rest})
		case strings.ContainsAny(p, "{}*:") || (p == "" && !last):
			return nil, fmt.Errorf("path template %q: segment %q not supported", t, p)
		default:
			segs = append(segs, segment{lit: p})
		}
	}
	return segs, nil
}

// match binds path's segments to rt's template; ok is false when they do
// not fit. A variable matches one non-empty segment, a ** variable the
// non-empty rest.
func (rt *Route) match(path string) (map[string]string, bool) {
	if !strings.HasPrefix(path, "/") {
		return nil, false
	}
	parts := strings.Split(path[1:], "/")
	params := map[string]string{}
	for i, s := range rt.segs {
		switch {
		case i >= len(parts):
			return nil, false
		case s.rest:
			v := strings.Join(parts[i:], "/")
			if v == "" {
				return nil, false
			}
			params[s.field] = v
			return params, true
		case s.field == "" && parts[i] != s.lit:
			return nil, false
		case s.field != "" && parts[i] == "":
			return nil, false
		case s.field != "":
			params[s.field] = parts[i]
		}
	}
	return params, len(parts) == len(rt.segs)
}

// literals counts the literal segments before the first variable and in
// all: a route with more literals is the more specific one.
func (rt *Route) specificity() (lead, total int) {
	lead = -1
	for i, s := range rt.segs {
		if s.field == "" {
			total++
		} else if lead < 0 {
			lead = i
		}
	}
	if lead < 0 {
		lead = len(rt.segs)
	}
	return lead, total
}

// Resolve maps verb and path (escaped as sent; variables are unescaped) to
// the method that serves it. Where two templates match (POST
// /v2/users/human and POST /v2/users/{user_id}), the one with the longer
// literal prefix wins, as in grpc-gateway's and vanguard's routers; two
// equally specific matches are an error.
func (d *Defs) Resolve(verb, path string) (*Match, error) {
	var best *Match
	ambiguous := false
	for _, rt := range d.Routes {
		if rt.Verb != verb {
			continue
		}
		params, ok := rt.match(path)
		if !ok {
			continue
		}
		m := &Match{Route: rt, Params: params}
		switch {
		case best == nil || more(rt, best.Route):
			best, ambiguous = m, false
		case !more(best.Route, rt):
			ambiguous = true
		}
	}
	switch {
	case best == nil:
		return nil, fmt.Errorf("%s %s: %w", verb, path, ErrNoRoute)
	case ambiguous:
		return nil, fmt.Errorf("%s %s: matches more than one template as specifically as %s", verb, path, best.Template)
	}
	for k, v := range best.Params {
		u, err := unescape(v)
		if err != nil {
			return nil, fmt.Errorf("%s %s: path segment %q: %w", verb, path, v, err)
		}
		best.Params[k] = u
	}
	return best, nil
}

func more(a, b *Route) bool {
	al, at := a.specificity()
	bl, bt := b.specificity()
	return al > bl || (al == bl && at > bt)
}

// fieldByPath finds the field a.b.c of md (nil when absent or when a
// segment before the last is not a message).
func fieldByPath(md protoreflect.MessageDescriptor, path string) protoreflect.FieldDescriptor {
	var fd protoreflect.FieldDescriptor
	for _, name := range strings.Split(path, ".") {
		if md == nil {
			return nil
		}
		fd = md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return nil
		}
		md = fd.Message()
	}
	return fd
}
