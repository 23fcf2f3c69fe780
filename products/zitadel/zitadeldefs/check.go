package zitadeldefs

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func unescape(s string) (string, error) { return url.PathUnescape(s) }

// strict is protojson in strict mode: an unknown field or enum name is an
// error. Any values resolve against the definitions.
func (d *Defs) strict() protojson.UnmarshalOptions {
	return protojson.UnmarshalOptions{DiscardUnknown: false, Resolver: d.types}
}

// CheckRequest resolves a call and checks it against the method's input
// message, the way the http rule binds it: the path variables set their
// fields, query parameters must name fields, and the body is the whole
// input (body "*"), one field of it (body "field") or absent (no body).
// It returns the match and the input message as the server would see it.
func (d *Defs) CheckRequest(verb, path string, query url.Values, body []byte) (*Match, proto.Message, error) {
	m, err := d.Resolve(verb, path)
	if err != nil {
		return nil, nil, err
	}
	in := dynamicpb.NewMessage(m.Method.Input())
	op := fmt.Sprintf("%s %s (%s, %s)", verb, path, m.Method.FullName(), m.Method.Input().FullName())
	body = bytes.TrimSpace(body)
	switch m.Body {
	case "":
		if len(body) > 0 {
			return m, nil, fmt.Errorf("%s: a body was sent, the http rule takes none", op)
		}
	case "*":
		if len(body) > 0 {
			if err := d.strict().Unmarshal(body, in); err != nil {
				return m, nil, fmt.Errorf("%s: body: %w", op, err)
			}
		}
	default:
		if err := d.unmarshalField(in, m.Body, body); err != nil {
			return m, nil, fmt.Errorf("%s: body (field %s): %w", op, m.Body, err)
		}
	}
	for field, v := range m.Params {
		if err := setString(in, field, v); err != nil {
			return m, nil, fmt.Errorf("%s: path variable %s: %w", op, field, err)
		}
	}
	for k, vs := range query {
		for _, v := range vs {
			if err := setString(in, k, v); err != nil {
				return m, nil, fmt.Errorf("%s: query parameter %s: %w", op, k, err)
			}
		}
	}
	return m, in, nil
}

// CheckResponse checks a 2xx response body against the method's output
// message (or its response_body field).
func (d *Defs) CheckResponse(m *Match, body []byte) (proto.Message, error) {
	out := dynamicpb.NewMessage(m.Method.Output())
	op := fmt.Sprintf("%s %s answer (%s)", m.Verb, m.Template, m.Method.Output().FullName())
	var err error
	if m.ResponseBody != "" {
		err = d.unmarshalField(out, m.ResponseBody, body)
	} else {
		err = d.strict().Unmarshal(body, out)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// unmarshalField decodes body as the field name of msg.
func (d *Defs) unmarshalField(msg *dynamicpb.Message, name string, body []byte) error {
	fd := msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		return fmt.Errorf("no field %s in %s", name, msg.Descriptor().FullName())
	}
	// {"<json name>": body} decodes the field with protojson's own rules
	// for its kind (message, repeated, scalar).
	var wrapped bytes.Buffer
	fmt.Fprintf(&wrapped, "{%q:", fd.JSONName())
	wrapped.Write(body)
	wrapped.WriteString("}")
	tmp := dynamicpb.NewMessage(msg.Descriptor())
	if err := d.strict().Unmarshal(wrapped.Bytes(), tmp); err != nil {
		return err
	}
	msg.Set(fd, tmp.Get(fd))
	return nil
}

// setString sets the string field at path (a.b.c, proto names) to v.
// Zitadel's path variables are all ids (strings); another kind is refused
// rather than guessed.
func setString(msg protoreflect.Message, path string, v string) error {
	fd := fieldByPath(msg.Descriptor(), path)
	if fd == nil {
		return fmt.Errorf("%s has no field %s", msg.Descriptor().FullName(), path)
	}
	if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
		return fmt.Errorf("field %s is %s, only string variables are supported", path, fd.Kind())
	}
	descend(msg, path).Set(fd, protoreflect.ValueOfString(v))
	return nil
}

// descend returns the message holding the last field of path, creating
// the intermediate messages.
func descend(msg protoreflect.Message, path string) protoreflect.Message {
	names := strings.Split(path, ".")
	for _, n := range names[:len(names)-1] {
		msg = msg.Mutable(msg.Descriptor().Fields().ByName(protoreflect.Name(n))).Message()
	}
	return msg
}
