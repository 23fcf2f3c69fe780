package main

import (
	"context"
	"strings"
	"testing"
)

func TestTopLevel(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // each must appear in stdout
		stderrWant string   // prefix of stderr
	}{
		{"help lists the subcommands", []string{"--help"}, 0, append(subNames(), "Usage: provision SUBCOMMAND", "Examples:", "Exit status:"), ""},
		{"help word", []string{"help"}, 0, []string{"Subcommands:"}, ""},
		{"version", []string{"--version"}, 0, []string{"provision "}, ""},
		{"no subcommand", nil, 2, nil, "provision: a subcommand is required: " + strings.Join(subNames(), ", ")},
		{"unknown subcommand", []string{"nosuch"}, 2, nil, `provision: unknown subcommand "nosuch"`},
		{"subcommand help", []string{"zitadel", "-h"}, 0, []string{"Usage: provision zitadel", "--help", "Example"}, ""},
		{"subcommand version", []string{"zitadel", "--version"}, 0, []string{"provision "}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, context.Background(), tt.args...)
			if code != tt.code || !strings.HasPrefix(stderr, tt.stderrWant) || (tt.stderrWant == "") != (stderr == "") {
				t.Errorf("exit %d, stderr %q; want %d and stderr starting %q", code, stderr, tt.code, tt.stderrWant)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if tt.code == 2 && (stdout != "" || !strings.Contains(stderr, "Try 'provision --help'.")) {
				t.Errorf("usage error: stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
}

func subNames() []string {
	var n []string
	for _, sc := range subcommands() {
		n = append(n, sc.Name)
	}
	return n
}
