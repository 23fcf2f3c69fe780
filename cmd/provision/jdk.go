package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products"
)

const jdkHead = `Usage: provision jdk --product NAME [--java-home DIR] [--jvm-dir DIR]

Finds the JDK NAME runs on (its need in products): --java-home when
it qualifies, else under --jvm-dir a JDK of the recommended major (Temurin's
first), then of the oldest it runs on, each read from its release file.
Prints its home, then "vendor version (home)", then, when it is below the
recommended one on a host with few CPUs, why that is a risk (for the caller
to warn with). None found is an error naming what is needed.
Products with a need: %s.

Flags:
`

const jdkTail = `
Exit status: 0 ok, 1 no JDK found, 2 usage error.

Example:
  provision jdk --product keycloak
`

// runJDK is "provision jdk".
func runJDK(_ context.Context, args []string, e env) error {
	var product, javaHome, jvmDir string
	fs := cli.NewFlagSet("jdk")
	fs.StringVar(&product, "product", "", "the product; required")
	fs.StringVar(&javaHome, "java-home", os.Getenv("JAVA_HOME"), "the JDK to try first (default: $JAVA_HOME)")
	fs.StringVar(&jvmDir, "jvm-dir", "/usr/lib/jvm", "where the system's JDKs are installed")
	if err := parse(fs, args, fmt.Sprintf(jdkHead, strings.Join(needingJDK(), ", ")), jdkTail, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (provision jdk takes flags only)", fs.Arg(0))
	}
	p, ok := products.Lookup(product)
	if !ok || p.JDK == nil {
		return cli.Usagef("--product %q: want one of %s", product, strings.Join(needingJDK(), ", "))
	}
	n := p.JDK
	j, ok := n.Find(javaHome, jvmDir)
	if !ok {
		return fmt.Errorf("%s needs a JDK %d or newer (%d recommended: %s): none found in $JAVA_HOME or %s (install e.g. temurin-%d-jdk)",
			product, n.Min, n.Prefer, n.Why, jvmDir, n.Prefer)
	}
	return printLines(e, append([]string{j.Home, j.String()}, nonEmpty(n.Warning(j, runtime.NumCPU()))...))
}

// needingJDK lists the products that run on a JDK.
func needingJDK() []string {
	return products.NamesWith(func(p product.Product) bool { return p.JDK != nil })
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
