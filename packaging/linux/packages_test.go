// Package linux_test checks the Linux packages (.deb, .rpm) that
// `make release` makes: it packs the nfpms section of .goreleaser.yaml with
// nfpm, the library goreleaser packs it with, adding the binary the way
// goreleaser does (bindir/<binary>, mode 0755), and checks what a person
// gets from the .deb with dpkg-deb and the unit with systemd-analyze.
//
// The checks that need those two tools skip, saying why, where a tool is
// not installed; AWBRIDGE_PACKAGING_TOOLS=1 (CI) makes that a failure.
// AWBRIDGE_DEB=<path> checks a .deb goreleaser made as well; a relative
// path is from the repository's root (as the mcpb tests' AWBRIDGE_DIST),
// not from this folder: AWBRIDGE_DEB=dist/awbridge_<version>_linux_amd64.deb.
package linux_test

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
	"go.yaml.in/yaml/v3"

	"github.com/awbridge/awbridge/install"
)

// nfpmSection is the part of goreleaser's nfpms entry this test packs.
// The section is decoded strictly: a key it does not know fails the test
// (teach it the key) rather than being left out of what is checked.
type nfpmSection struct {
	ID               string   `yaml:"id"`
	IDs              []string `yaml:"ids"`
	PackageName      string   `yaml:"package_name"`
	FileNameTemplate string   `yaml:"file_name_template"` // goreleaser's alone
	Formats          []string `yaml:"formats"`
	Vendor           string   `yaml:"vendor"`
	Maintainer       string   `yaml:"maintainer"`
	Homepage         string   `yaml:"homepage"`
	Description      string   `yaml:"description"`
	License          string   `yaml:"license"`
	Section          string   `yaml:"section"`
	Bindir           string   `yaml:"bindir"`
	MTime            string   `yaml:"mtime"` // a template: the commit's date
	Contents         []struct {
		Src      string `yaml:"src"`
		Dst      string `yaml:"dst"`
		Type     string `yaml:"type"`
		FileInfo struct {
			Mode fs.FileMode `yaml:"mode"`
		} `yaml:"file_info"`
	} `yaml:"contents"`
}

// releaseConfig reads .goreleaser.yaml: the one nfpms entry and the name
// of the binary its builds make.
func releaseConfig(t *testing.T, root string) (sec nfpmSection, binary string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			ID     string `yaml:"id"`
			Binary string `yaml:"binary"`
		} `yaml:"builds"`
		NFPMs []yaml.Node `yaml:"nfpms"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.NFPMs) != 1 {
		t.Fatalf(".goreleaser.yaml has %d nfpms entries, the test packs one", len(cfg.NFPMs))
	}
	entry, err := yaml.Marshal(&cfg.NFPMs[0])
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(entry))
	dec.KnownFields(true)
	if err := dec.Decode(&sec); err != nil {
		t.Fatalf(".goreleaser.yaml nfpms: %v (lines count from the entry; a key this test does not pack: teach nfpmSection and pack it)", err)
	}
	for _, b := range cfg.Builds {
		if slices.Contains(sec.IDs, b.ID) {
			binary = b.Binary
		}
	}
	if binary == "" || len(sec.IDs) != 1 {
		t.Fatalf("nfpms ids %v: want the one build that makes the binary (builds: %+v)", sec.IDs, cfg.Builds)
	}
	return sec, binary
}

// pack makes the package of format from sec as goreleaser does (its
// internal/pipe/nfpm: the contents, then each binary at bindir with mode
// 0755 and the package's mtime), with exe as the binary, into dir.
func pack(t *testing.T, sec nfpmSection, binary, exe, format, dir string) string {
	t.Helper()
	mtime := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) // goreleaser: the commit's date
	templated := []string{sec.PackageName, sec.Vendor, sec.Maintainer, sec.Homepage, sec.Description, sec.License, sec.Section, sec.Bindir}
	var contents files.Contents
	for _, c := range sec.Contents {
		templated = append(templated, c.Src, c.Dst)
		contents = append(contents, &files.Content{Source: c.Src, Destination: c.Dst, Type: c.Type,
			FileInfo: &files.ContentFileInfo{Mode: c.FileInfo.Mode}})
	}
	for _, v := range templated {
		if strings.Contains(v, "{{") {
			t.Fatalf("nfpms: goreleaser expands %q, this test does not: teach it", v)
		}
	}
	contents = append(contents, &files.Content{Source: exe, Destination: path.Join(sec.Bindir, binary),
		FileInfo: &files.ContentFileInfo{Mode: 0o755, MTime: mtime}})
	info := nfpm.WithDefaults(&nfpm.Info{
		Name: sec.PackageName, Arch: "amd64", Platform: "linux", Version: "1.2.3",
		Section: sec.Section, Maintainer: sec.Maintainer, Description: sec.Description,
		Vendor: sec.Vendor, Homepage: sec.Homepage, License: sec.License, MTime: mtime,
		Overridables: nfpm.Overridables{Contents: contents},
	})
	packager, err := nfpm.Get(format)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, sec.PackageName+"."+format)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := packager.Package(info, f); err != nil {
		t.Fatalf("nfpm %s: %v", format, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLinuxPackages: the .deb and .rpm pack from .goreleaser.yaml; the
// .deb holds /usr/bin/awbridge (executable), the unit install renders in
// /usr/lib/systemd/user/ and the docs, has no maintainer scripts (nothing
// enabled or started), and systemd accepts the unit.
func TestLinuxPackages(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	sec, binary := releaseConfig(t, root)
	unit, err := install.Render(install.PackageSpec())
	if err != nil {
		t.Fatal(err)
	}
	if got := path.Join(sec.Bindir, binary); got != install.PackagedExecutable {
		t.Errorf("the packages put the binary at %s, the unit runs %s", got, install.PackagedExecutable)
	}
	if sec.MTime == "" {
		t.Error("nfpms has no mtime: every build would date the packages' files differently (not reproducible)")
	}
	if !slices.Contains(sec.Formats, "deb") || !slices.Contains(sec.Formats, "rpm") {
		t.Errorf("formats %v, want deb and rpm", sec.Formats)
	}
	// The unit packed is the render (packaging/linux/awbridge.service is
	// checked against it by the install tests; this is the link to it).
	var unitSrc string
	for _, c := range sec.Contents {
		if c.Dst == install.PackageSpec().UnitPath() {
			unitSrc = c.Src
		}
	}
	if unitSrc == "" {
		t.Fatalf("nfpms contents have no %s", install.PackageSpec().UnitPath())
	}
	if b, err := os.ReadFile(filepath.Join(root, unitSrc)); err != nil || string(b) != unit {
		t.Fatalf("%s is not the unit install renders (go test ./install -update rewrites it): %v", unitSrc, err)
	}

	dir := t.TempDir()
	exe := filepath.Join(dir, "awbridge-stub")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // goreleaser's contents are relative to the repository
	var deb string
	for _, format := range sec.Formats {
		p := pack(t, sec, binary, exe, format, dir)
		if format == "deb" {
			deb = p
		}
	}

	t.Run("dpkg-deb", func(t *testing.T) { checkDeb(t, deb, sec.PackageName, unit) })
	if p := os.Getenv("AWBRIDGE_DEB"); p != "" {
		t.Run("AWBRIDGE_DEB", func(t *testing.T) { checkDeb(t, p, sec.PackageName, unit) })
	}
	t.Run("systemd-analyze", func(t *testing.T) { verifyUnit(t, unit) })
}

// need skips t when tool is not installed, or fails it with
// AWBRIDGE_PACKAGING_TOOLS set.
func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("AWBRIDGE_PACKAGING_TOOLS") != "" {
			t.Fatalf("%s is not installed and AWBRIDGE_PACKAGING_TOOLS is set: %v", tool, err)
		}
		t.Skipf("%s is not installed (AWBRIDGE_PACKAGING_TOOLS=1 fails instead): %v", tool, err)
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkDeb lists the .deb at p with dpkg-deb: the files a person gets,
// their modes and owner; no maintainer scripts; the unit's text.
func checkDeb(t *testing.T, p, name, unit string) {
	need(t, "dpkg-deb")
	want := map[string]string{
		"./usr/bin/awbridge":                      "-rwxr-xr-x",
		"./usr/lib/systemd/user/awbridge.service": "-rw-r--r--",
		"./usr/share/doc/awbridge/README.md":      "-rw-r--r--",
		"./usr/share/doc/awbridge/LICENSE":        "-rw-r--r--",
	}
	listing := run(t, "dpkg-deb", "-c", p)
	got := map[string]string{}
	for line := range strings.Lines(listing) {
		// drwxr-xr-x root/root 0 2026-11-28 12:00 ./usr/
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("dpkg-deb -c line %q", line)
		}
		if f[1] != "root/root" {
			t.Errorf("%s belongs to %s", f[5], f[1])
		}
		if !strings.HasPrefix(f[0], "d") {
			got[f[5]] = f[0]
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("the .deb's files (mode) are\n%v\nwant\n%v\n%s", got, want, listing)
	}
	if pkg := strings.TrimSpace(run(t, "dpkg-deb", "-f", p, "Package")); pkg != name {
		t.Errorf("Package: %q, want %q", pkg, name)
	}
	// Nothing enabled or started: no maintainer scripts (postinst...) in
	// the control archive, whose members -I lists as
	// "511 bytes, 13 lines control".
	info := run(t, "dpkg-deb", "-I", p)
	var control []string
	for line := range strings.Lines(info) {
		if f := strings.Fields(line); len(f) > 2 && f[1] == "bytes," {
			control = append(control, f[len(f)-1])
		}
	}
	if !slices.Equal(control, []string{"control", "md5sums"}) {
		t.Errorf("the .deb's control archive holds %v, want control and md5sums only:\n%s", control, info)
	}
	x := t.TempDir()
	run(t, "dpkg-deb", "-x", p, x)
	if b, err := os.ReadFile(filepath.Join(x, "usr", "lib", "systemd", "user", "awbridge.service")); err != nil || string(b) != unit {
		t.Errorf("the .deb's unit is not the one install renders (%v):\n%s", err, b)
	}
}

// verifyUnit runs systemd-analyze --user verify on the unit. verify
// checks that ExecStart's program exists and is executable: the unit
// checked is the packaged one with /usr/bin/awbridge replaced by a stub
// (the packages put the binary there; dpkg-deb checks it). systemd reports
// a bad line as a warning and still exits 0: any output fails the test.
func verifyUnit(t *testing.T, unit string) {
	need(t, "systemd-analyze")
	dir := t.TempDir()
	exe := filepath.Join(dir, "awbridge")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := "\nExecStart=" + install.PackagedExecutable + " "
	if strings.Count(unit, start) != 1 {
		t.Fatalf("the unit does not run %s once:\n%s", install.PackagedExecutable, unit)
	}
	file := filepath.Join(dir, "awbridge.service")
	if err := os.WriteFile(file, []byte(strings.Replace(unit, start, "\nExecStart="+exe+" ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime := filepath.Join(dir, "run") // a user manager needs XDG_RUNTIME_DIR
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("systemd-analyze", "--user", "verify", file)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze --user verify: %v\n%s\n%s", err, out, unit)
	}
}
