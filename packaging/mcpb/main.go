// Command mcpb makes awbridge's Claude Desktop bundles and its MCP Registry
// entry from the binaries a release built (`make release` runs it after
// goreleaser; `make bundle` for Linux alone):
//
//   - one bundle per OS, dist/awbridge_<version>_<os>.mcpb: manifest.json,
//     icon.png, the launcher awbridge.sh and the OS's binaries under
//     server/<goos>-<goarch>/, validated and packed by the official mcpb
//     tool;
//   - dist/server.json for the MCP Registry, each bundle a package with its
//     download URL and SHA-256;
//   - their lines in dist/checksums.txt.
//
// It reads the binaries where goreleaser puts them
// (dist/awbridge_linux_amd64_v1/awbridge, dist/awbridge-macos_darwin_all/...)
// and the version from dist/metadata.json unless -version names one. The
// manifest lists the tools and prompts the host's binary serves.
//
//	go run ./packaging/mcpb [-dist dist] [-os darwin,linux,windows] [-version V] [-mcpb CMD]
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

const (
	repoURL        = "https://github.com/awbridge/awbridge"
	registryName   = "io.github.awbridge/awbridge"
	registrySchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	description    = "What the person at this desktop is doing now and where their time went, from ActivityWatch"
	launcher       = "awbridge.sh"
	// mcpbTool is the official bundle tool, pinned; -mcpb overrides it.
	mcpbTool = "npx --yes @anthropic-ai/mcpb@2.1.2"
)

//go:embed awbridge.sh
var launcherText []byte

//go:embed icon.png
var iconPNG []byte

// A bundle is one OS's .mcpb: the goreleaser goarch of each binary it
// holds ("all" is the macOS universal binary) and the OS's name in a
// manifest (Node's process.platform).
type bundle struct {
	goos     string
	arches   []string
	platform string
}

func bundles() []bundle {
	return []bundle{
		{"darwin", []string{"all"}, "darwin"},
		{"linux", []string{"amd64", "arm64"}, "linux"},
		// Windows on ARM runs the amd64 binary; a manifest cannot choose by CPU.
		{"windows", []string{"amd64"}, "win32"},
	}
}

// A setting is one user_config entry of the manifest, passed to awbridge
// as an environment variable (and listed as one in server.json).
type setting struct {
	key, env, title, description, def string
	secret                            bool
}

func settings() []setting {
	return []setting{
		{"aw_url", "AWBRIDGE_AW_URL", "ActivityWatch URL",
			"Where your ActivityWatch server answers.", "http://127.0.0.1:5600", false},
		{"aw_api_key", "AWBRIDGE_AW_API_KEY", "ActivityWatch API key",
			"Only for aw-server-rust with authentication turned on; leave it blank otherwise.", "", true},
	}
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mcpb:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log io.Writer) error {
	fs := flag.NewFlagSet("mcpb", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "the release's folder")
	oses := fs.String("os", "darwin,linux,windows", "the bundles to make")
	version := fs.String("version", "", "the release's version (default: dist/metadata.json's)")
	tool := fs.String("mcpb", mcpbTool, "the mcpb command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var names []string
	for _, b := range bundles() {
		names = append(names, b.goos)
	}
	wanted := strings.Split(*oses, ",")
	for _, w := range wanted {
		if !slices.Contains(names, w) {
			return fmt.Errorf("-os %q: %q is no bundle (%s)", *oses, w, strings.Join(names, ", "))
		}
	}
	if *version == "" {
		v, err := metadataVersion(*dist)
		if err != nil {
			return err
		}
		*version = v
	}
	bins, err := findBinaries(*dist)
	if err != nil {
		return err
	}
	host, ok := bins[hostTarget()]
	if !ok {
		return fmt.Errorf("no binary for this machine (%s) in %s to list the tools", hostTarget(), *dist)
	}
	offer, err := listServed(ctx, host)
	if err != nil {
		return err
	}
	var made []string
	for _, b := range bundles() {
		if !slices.Contains(wanted, b.goos) {
			continue
		}
		dir := filepath.Join(*dist, "mcpb", b.goos)
		if err := stage(dir, b, *version, offer, bins); err != nil {
			return err
		}
		out := filepath.Join(*dist, bundleName(*version, b.goos))
		if err := pack(ctx, *tool, dir, out, log); err != nil {
			return err
		}
		made = append(made, out)
	}
	sj, err := serverJSON(*version, made)
	if err != nil {
		return err
	}
	serverFile := filepath.Join(*dist, "server.json")
	if err := os.WriteFile(serverFile, sj, 0o644); err != nil {
		return err
	}
	return addChecksums(filepath.Join(*dist, "checksums.txt"), append(made, serverFile))
}

func bundleName(version, goos string) string {
	return "awbridge_" + version + "_" + goos + ".mcpb"
}

// metadataVersion is the version goreleaser gave the release.
func metadataVersion(dist string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		return "", fmt.Errorf("the release's version: %w (run goreleaser first, or pass -version)", err)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(b, &m); err != nil || m.Version == "" {
		return "", fmt.Errorf("%s names no version", filepath.Join(dist, "metadata.json"))
	}
	return m.Version, nil
}

// findBinaries maps "goos-goarch" to each awbridge binary in dist's
// build folders (awbridge_<goos>_<goarch>[_variant], awbridge-macos_darwin_all).
// The folder is read, not globbed: its path may hold glob characters.
func findBinaries(dist string) (map[string]string, error) {
	entries, err := os.ReadDir(dist)
	if err != nil {
		return nil, err
	}
	bins := map[string]string{}
	for _, e := range entries {
		parts := strings.Split(e.Name(), "_")
		if !strings.HasPrefix(e.Name(), "awbridge") || len(parts) < 3 {
			continue
		}
		d := filepath.Join(dist, e.Name())
		goos, goarch := parts[1], parts[2]
		name := "awbridge"
		if goos == "windows" {
			name += ".exe"
		}
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
			bins[goos+"-"+goarch] = filepath.Join(d, name)
		}
	}
	return bins, nil
}

// hostTarget is this machine's key in findBinaries' map.
func hostTarget() string {
	if runtime.GOOS == "darwin" {
		return "darwin-all"
	}
	return runtime.GOOS + "-" + runtime.GOARCH
}

type tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// prompt is a manifest's prompt: its text has ${arguments.NAME} where each
// argument goes.
type prompt struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Arguments   []string `json:"arguments"`
	Text        string   `json:"text"`
}

// served is what the binary serves, as the manifest lists it.
type served struct {
	tools   []tool
	prompts []prompt
}

// listServed asks the binary for the tools (`awbridge tools --json`) and
// prompts (`awbridge prompts --json`) it serves, in an empty home so no
// config or running service has a say; each tool's title is its
// description in the manifest.
func listServed(ctx context.Context, bin string) (served, error) {
	home, err := os.MkdirTemp("", "awbridge-mcpb")
	if err != nil {
		return served{}, err
	}
	defer os.RemoveAll(home)
	ask := func(v any, args ...string) error {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home,
			"AWBRIDGE_SOCKET=" + filepath.Join(home, "none.sock")}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s %s: %w: %s", bin, args[0], err, stderr.Bytes())
		}
		if err := json.Unmarshal(out, v); err != nil {
			return fmt.Errorf("%s %s: %w", bin, args[0], err)
		}
		return nil
	}
	var tools struct {
		Tools []struct{ Name, Title string }
	}
	var prompts struct {
		Prompts []prompt
	}
	if err := ask(&tools, "tools", "--json", "--no-relay"); err != nil {
		return served{}, err
	}
	if err := ask(&prompts, "prompts", "--json"); err != nil {
		return served{}, err
	}
	s := served{prompts: prompts.Prompts}
	for _, t := range tools.Tools {
		s.tools = append(s.tools, tool{t.Name, t.Title})
	}
	return s, nil
}

// manifest is an MCP bundle's manifest.json (manifest_version 0.3).
type manifest struct {
	ManifestVersion string            `json:"manifest_version"`
	Name            string            `json:"name"`
	DisplayName     string            `json:"display_name"`
	Version         string            `json:"version"`
	Description     string            `json:"description"`
	LongDescription string            `json:"long_description"`
	Author          person            `json:"author"`
	Repository      repository        `json:"repository"`
	Homepage        string            `json:"homepage"`
	Documentation   string            `json:"documentation"`
	Support         string            `json:"support"`
	Icon            string            `json:"icon"`
	Server          server            `json:"server"`
	Tools           []tool            `json:"tools"`
	Prompts         []prompt          `json:"prompts,omitempty"`
	Keywords        []string          `json:"keywords"`
	License         string            `json:"license"`
	Compatibility   compatibility     `json:"compatibility"`
	UserConfig      map[string]option `json:"user_config"`
}

type person struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type server struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  mcpConfig `json:"mcp_config"`
}

type mcpConfig struct {
	Command           string               `json:"command,omitempty"`
	Args              []string             `json:"args,omitempty"`
	Env               map[string]string    `json:"env,omitempty"`
	PlatformOverrides map[string]mcpConfig `json:"platform_overrides,omitempty"`
}

type compatibility struct {
	Platforms []string `json:"platforms"`
}

type option struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Default     string `json:"default,omitempty"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive,omitempty"`
}

// newManifest is b's manifest. Unix runs the launcher with /bin/sh (a
// file without its executable bit runs that way too); Windows runs the
// .exe itself.
func newManifest(b bundle, version string, s served) manifest {
	env, opts := map[string]string{}, map[string]option{}
	for _, s := range settings() {
		env[s.env] = "${user_config." + s.key + "}"
		// A setting with a default is required, so Claude Desktop keeps it
		// filled: a cleared field would reach awbridge as "", which it
		// refuses for the URL.
		opts[s.key] = option{Type: "string", Title: s.title, Description: s.description, Default: s.def,
			Required: s.def != "", Sensitive: s.secret}
	}
	return manifest{
		ManifestVersion: "0.3",
		Name:            "awbridge",
		DisplayName:     "awbridge (ActivityWatch)",
		Version:         version,
		Description:     description + ".",
		LongDescription: "awbridge reads your local [ActivityWatch](https://activitywatch.net) time tracker and tells " +
			"Claude which app and window have focus, the browser tab, whether you are away, and where your time " +
			"went today or this week. Window titles and " +
			"URLs are cleaned, password managers and private tabs are hidden, and Claude is told they are data, " +
			"never instructions. ActivityWatch must be running.",
		Author:        person{"The awbridge authors", repoURL},
		Repository:    repository{"git", repoURL + ".git"},
		Homepage:      repoURL,
		Documentation: repoURL + "#readme",
		Support:       repoURL + "/issues",
		Icon:          "icon.png",
		Server: server{
			Type:       "binary",
			EntryPoint: launcher,
			MCPConfig: mcpConfig{
				Command: "/bin/sh",
				Args:    []string{"${__dirname}/" + launcher, "stdio"},
				Env:     env,
				PlatformOverrides: map[string]mcpConfig{
					"win32": {Command: "${__dirname}/server/windows-amd64/awbridge.exe", Args: []string{"stdio"}},
				},
			},
		},
		Tools:         s.tools,
		Prompts:       s.prompts,
		Keywords:      []string{"activitywatch", "time tracking", "productivity", "context", "focus"},
		License:       "MIT",
		Compatibility: compatibility{[]string{b.platform}},
		UserConfig:    opts,
	}
}

// stage writes b's bundle folder: the manifest, the icon, the launcher and
// the binaries (mode 0755 whatever the umask; Claude Desktop may drop the
// bit, the launcher puts it back).
func stage(dir string, b bundle, version string, s served, bins map[string]string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	m, err := json.MarshalIndent(newManifest(b, version, s), "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{"manifest.json": append(m, '\n'), "icon.png": iconPNG, launcher: launcherText}
	for _, arch := range b.arches {
		src, ok := bins[b.goos+"-"+arch]
		if !ok {
			return fmt.Errorf("the %s bundle needs the %s/%s binary, which is not in the release", b.goos, b.goos, arch)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		files[binPath(b.goos, arch)] = data
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if name == launcher || strings.HasPrefix(name, "server/") {
			mode = 0o755
		}
		// The umask trims WriteFile's mode, and mcpb pack records the mode
		// in the bundle: Chmod makes it the same on every machine.
		if err := os.WriteFile(p, data, mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
	return nil
}

// binPath is where a binary lives in its bundle.
func binPath(goos, arch string) string {
	p := "server/" + goos + "-" + arch + "/awbridge"
	if goos == "windows" {
		p += ".exe"
	}
	return p
}

// fixedDate is loaded into the mcpb tool (NODE_OPTIONS=--require) so a
// bundle's zip entries carry the commit's time (SOURCE_DATE_EPOCH), not
// the time of packing: the same commit packs the same bytes.
const fixedDate = `const t = Number(process.env.SOURCE_DATE_EPOCH) * 1000;
if (t > 0) {
  const D = Date;
  globalThis.Date = class extends D {
    constructor(...a) { if (a.length) { super(...a); } else { super(t); } }
    static now() { return t; }
  };
}
`

// pack validates dir's manifest and packs dir into out with the mcpb tool.
func pack(ctx context.Context, tool, dir, out string, log io.Writer) error {
	words := strings.Fields(tool)
	if len(words) == 0 {
		return errors.New("-mcpb is empty")
	}
	preload := filepath.Join(filepath.Dir(out), ".mcpb-fixed-date.cjs")
	if err := os.WriteFile(preload, []byte(fixedDate), 0o644); err != nil {
		return err
	}
	defer os.Remove(preload)
	abs, err := filepath.Abs(preload)
	if err != nil {
		return err
	}
	// NODE_OPTIONS splits on spaces outside double quotes, and inside them
	// a backslash escapes the next character (Windows paths have both).
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(abs) + `"`
	env := append(os.Environ(), "TZ=UTC", "NODE_OPTIONS=--require "+quoted)
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		env = append(env, "SOURCE_DATE_EPOCH=315532800") // 1980-01-01, the first time a zip can hold
	}
	for _, args := range [][]string{{"validate", filepath.Join(dir, "manifest.json")}, {"pack", dir, out}} {
		cmd := exec.CommandContext(ctx, words[0], append(words[1:], args...)...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", tool, args[0], err)
		}
	}
	return nil
}

// registryServer is server.json, the MCP Registry's entry for awbridge.
type registryServer struct {
	Schema      string `json:"$schema"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Repository  struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	} `json:"repository"`
	WebsiteURL string            `json:"websiteUrl"`
	Version    string            `json:"version"`
	Packages   []registryPackage `json:"packages"`
}

type registryPackage struct {
	RegistryType string `json:"registryType"`
	Identifier   string `json:"identifier"`
	Version      string `json:"version"`
	FileSha256   string `json:"fileSha256"`
	Transport    struct {
		Type string `json:"type"`
	} `json:"transport"`
	EnvironmentVariables []registryVariable `json:"environmentVariables"`
}

type registryVariable struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     string `json:"default,omitempty"`
	IsSecret    bool   `json:"isSecret,omitempty"`
}

// serverJSON lists each bundle with the URL a release of version serves
// it from and its SHA-256.
func serverJSON(version string, files []string) ([]byte, error) {
	s := registryServer{Schema: registrySchema, Name: registryName, Title: "awbridge",
		Description: description, WebsiteURL: repoURL, Version: version}
	s.Repository.URL, s.Repository.Source = repoURL, "github"
	var vars []registryVariable
	for _, st := range settings() {
		vars = append(vars, registryVariable{st.env, st.description, st.def, st.secret})
	}
	for _, f := range files {
		sum, err := sha256File(f)
		if err != nil {
			return nil, err
		}
		p := registryPackage{RegistryType: "mcpb", Version: version, FileSha256: sum, EnvironmentVariables: vars,
			Identifier: repoURL + "/releases/download/v" + version + "/" + filepath.Base(f)}
		p.Transport.Type = "stdio"
		s.Packages = append(s.Packages, p)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

func sha256File(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// addChecksums puts files' lines into the checksums file ("<sha256>  <name>",
// goreleaser's format, sorted by name), keeping the lines already there.
func addChecksums(sumsFile string, files []string) error {
	sums := map[string]string{}
	if f, err := os.Open(sumsFile); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if sum, name, ok := strings.Cut(sc.Text(), "  "); ok {
				sums[name] = sum
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	for _, f := range files {
		sum, err := sha256File(f)
		if err != nil {
			return err
		}
		sums[filepath.Base(f)] = sum
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&b, "%s  %s\n", sums[name], name)
	}
	return os.WriteFile(sumsFile, []byte(b.String()), 0o644)
}
