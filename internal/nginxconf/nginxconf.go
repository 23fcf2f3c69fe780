// Package nginxconf writes the nginx that idpbench measures its load
// generator against (the bench tool) and runs its tests on (nginxtest): one
// worker serving a static discovery document on 127.0.0.1, everything in
// one directory.
package nginxconf

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
)

// Config is one nginx's settings.
type Config struct {
	Port int
	// Discovery is the document served at /.well-known/openid-configuration.
	Discovery string
	// AccessLog is the access log's path; "": off.
	AccessLog string
	// StubStatus serves nginx's counters at /nginx_status.
	StubStatus bool
	// WorkerConnections (default 1024) and RlimitNofile (default: nginx's,
	// the process limit) bound the connections the worker holds.
	WorkerConnections, RlimitNofile int
}

// Write writes DIR/nginx.conf, the document under DIR/html and DIR/tmp,
// for `nginx -p DIR -c DIR/nginx.conf`. "user root" lets a worker started
// by root read a private temp directory (nginx ignores it when not run as
// root).
func Write(dir string, c Config) error {
	doc := filepath.Join(dir, "html", ".well-known", "openid-configuration")
	for _, d := range []string{filepath.Dir(doc), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	rlimit, status := "", ""
	if c.RlimitNofile > 0 {
		rlimit = fmt.Sprintf("worker_rlimit_nofile %d;\n", c.RlimitNofile)
	}
	if c.StubStatus {
		status = "    location = /nginx_status { stub_status; }\n"
	}
	conf := fmt.Sprintf(`daemon off;
user root;
worker_processes 1;
pid %[1]s/nginx.pid;
%[4]sevents { worker_connections %[5]d; }
http {
  access_log %[3]s;
  client_body_temp_path %[1]s/tmp;
  proxy_temp_path %[1]s/tmp;
  fastcgi_temp_path %[1]s/tmp;
  uwsgi_temp_path %[1]s/tmp;
  scgi_temp_path %[1]s/tmp;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:%[2]d;
    root %[1]s/html;
    default_type application/json;
%[6]s  }
}
`, dir, c.Port, cmp.Or(c.AccessLog, "off"), rlimit, cmp.Or(c.WorkerConnections, 1024), status)
	if err := os.WriteFile(doc, []byte(c.Discovery), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644)
}
