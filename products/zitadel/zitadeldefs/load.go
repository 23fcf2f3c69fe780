// Package zitadeldefs reads Zitadel's own API definitions — the npm
// package @zitadel/proto, whose protobuf-es modules (es/**/*_pb.js) embed
// every serialized FileDescriptorProto — and checks HTTP calls against
// them: the verb and path must be mapped to a method by its google.api.http
// option, the request body must parse as the method's input message and a
// response body as its output message, with protojson in strict mode
// (unknown fields and unknown enum names are errors).
//
// It is used by tests only (the definition check and zitadeltest's fake);
// no production binary imports it.
package zitadeldefs

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	// The well-known types the package imports from @bufbuild/protobuf/wkt
	// instead of shipping them: linked so that protoregistry.GlobalFiles
	// holds their descriptors.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// EnvDir names the environment variable that holds the unpacked package's
// directory (the one with package.json); products/zitadel/proto.sh
// fetches it.
const EnvDir = "IDPBENCH_ZITADEL_PROTO"

// Package, Version: the definitions idpbench is checked against.
const (
	Package = "@zitadel/proto"
	Version = "1.3.1"
)

// Defs are the loaded definitions.
type Defs struct {
	Dir    string
	Files  *protoregistry.Files
	Routes []*Route // every HTTP binding of every method, sorted by template
	types  *dynamicpb.Types
}

// fileDescRe matches one protobuf-es v2 file export:
//
//	export const file_x_y = /*@__PURE__*/
//	  fileDesc("<base64 FileDescriptorProto>", [file_dep1, file_dep2]);
//
// protobuf-es strips the dependency list from the embedded descriptor and
// passes the imported files' exports instead, so the imports are read back
// from the second argument.
var fileDescRe = regexp.MustCompile(`export const (file_\w+) = /\*@__PURE__\*/\s*fileDesc\("([A-Za-z0-9+/=]+)"(?:,\s*\[([\w,\s]*)\])?\)`)

// Load reads the package unpacked in dir: its package.json must name
// @zitadel/proto at Version.
func Load(dir string) (*Defs, error) {
	if err := checkPackage(dir); err != nil {
		return nil, err
	}
	protos, err := readModules(filepath.Join(dir, "es"))
	if err != nil {
		return nil, err
	}
	files, err := buildFiles(protos)
	if err != nil {
		return nil, err
	}
	d := &Defs{Dir: dir, Files: files, types: dynamicpb.NewTypes(files)}
	if err := d.buildRoutes(); err != nil {
		return nil, err
	}
	return d, nil
}

func checkPackage(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return fmt.Errorf("reading %s's package.json: %w", Package, err)
	}
	var pj struct{ Name, Version string }
	if err := json.Unmarshal(b, &pj); err != nil {
		return fmt.Errorf("%s/package.json: %w", dir, err)
	}
	if pj.Name != Package || pj.Version != Version {
		return fmt.Errorf("%s/package.json: %s@%s, want %s@%s", dir, pj.Name, pj.Version, Package, Version)
	}
	return nil
}

// module is one decoded *_pb.js file descriptor and the exports it imports.
type module struct {
	export string
	fd     *descriptorpb.FileDescriptorProto
	deps   []string
}

// readModules decodes the file descriptor embedded in every *_pb.js below
// root.
func readModules(root string) ([]module, error) {
	var mods []module
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, "_pb.js") {
			return err
		}
		m, err := readModule(path)
		if err != nil {
			return err
		}
		mods = append(mods, m)
		return nil
	})
	if err == nil && len(mods) == 0 {
		err = fmt.Errorf("no *_pb.js module below %s", root)
	}
	return mods, err
}

func readModule(path string) (module, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return module{}, err
	}
	ms := fileDescRe.FindAllSubmatch(src, -1)
	if len(ms) != 1 {
		return module{}, fmt.Errorf("%s: %d fileDesc exports, want 1", path, len(ms))
	}
	raw, err := base64.StdEncoding.DecodeString(string(ms[0][2]))
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(string(ms[0][2]))
	}
	if err != nil {
		return module{}, fmt.Errorf("%s: fileDesc is not base64: %w", path, err)
	}
	fd := new(descriptorpb.FileDescriptorProto)
	// An empty resolver keeps every option extension (google.api.http,
	// openapiv2, ...) as unknown bytes, whatever else this binary links.
	if err := (proto.UnmarshalOptions{Resolver: new(protoregistry.Types)}).Unmarshal(raw, fd); err != nil {
		return module{}, fmt.Errorf("%s: fileDesc is not a FileDescriptorProto: %w", path, err)
	}
	var deps []string
	for d := range strings.FieldsFuncSeq(string(ms[0][3]), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		deps = append(deps, d)
	}
	return module{export: string(ms[0][1]), fd: fd, deps: deps}, nil
}

// exportName is protobuf-es's name for a file's export:
// zitadel/session/v2/session.proto -> file_zitadel_session_v2_session.
func exportName(protoPath string) string {
	s := strings.TrimSuffix(protoPath, ".proto")
	return "file_" + regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllString(s, "_")
}

// buildFiles links the modules, with the well-known types from this
// binary's registry, into one registry. Every import must resolve.
func buildFiles(mods []module) (*protoregistry.Files, error) {
	byExport := map[string]string{} // export -> proto path
	set := &descriptorpb.FileDescriptorSet{}
	for _, m := range mods {
		byExport[m.export] = m.fd.GetName()
		set.File = append(set.File, m.fd)
	}
	have := map[string]bool{}
	for _, m := range mods {
		have[m.fd.GetName()] = true
	}
	var wkt []string
	for _, m := range mods {
		m.fd.Dependency = nil
		for _, d := range m.deps {
			path, ok := byExport[d]
			if !ok {
				path, ok = wellKnown(d)
			}
			if !ok {
				return nil, fmt.Errorf("%s imports %s, which is neither in the package nor a well-known type", m.fd.GetName(), d)
			}
			m.fd.Dependency = append(m.fd.Dependency, path)
			if !have[path] {
				have[path] = true
				wkt = append(wkt, path)
			}
		}
	}
	sort.Strings(wkt)
	for _, path := range wkt {
		fd, _ := protoregistry.GlobalFiles.FindFileByPath(path)
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("linking the %s descriptors: %w", Package, err)
	}
	return files, nil
}

// wellKnown maps an export like file_google_protobuf_duration to the
// well-known type's proto path in this binary's registry.
func wellKnown(export string) (string, bool) {
	var path string
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if p := fd.Path(); strings.HasPrefix(p, "google/protobuf/") && exportName(p) == export {
			path = p
			return false
		}
		return true
	})
	return path, path != ""
}
