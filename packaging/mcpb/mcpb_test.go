package main

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/awfixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// distEnv names a release folder made by `make bundle` or `make release`
// (relative to the repository's root): the tests then check the bundles
// and server.json the mcpb tool packed there; without it they make their
// own (zipped here, not by mcpb).
const distEnv = "AWBRIDGE_DIST"

// givenDist is $AWBRIDGE_DIST from this package's folder; "" when unset.
func givenDist() string {
	d := os.Getenv(distEnv)
	if d == "" || filepath.IsAbs(d) {
		return d
	}
	return filepath.Join("..", "..", d)
}

// TestBundle opens the bundle for this OS the way Claude Desktop does:
// every file unpacked at mode 0600 (no executable bit), the manifest's
// command resolved (${__dirname}, ${user_config.*}, the platform
// override), the API key left blank; then the official MCP SDK client
// lists the tools the manifest names and reads ActivityWatch through them.
func TestBundle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var auth []string
	fs := awfixture.NewServer(mustFixtures(t))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := unpack0600(t, bundleUnderTest(t))
	m := readManifest(t, dir)
	command, args, env := resolve(m, dir, platform(), map[string]string{"aw_url": srv.URL})
	cmd := exec.Command(command, args...)
	cmd.Env = append(isolated(t), env...)
	client := sdk.NewClient(&sdk.Implementation{Name: "bundle-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s %v: %v", command, args, err)
	}
	defer cs.Close()

	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var served, named []string
	for _, tl := range listed.Tools {
		served = append(served, tl.Name+": "+tl.Title)
	}
	for _, tl := range m.Tools {
		named = append(named, tl.Name+": "+tl.Description)
	}
	if !slices.Equal(served, named) {
		t.Errorf("the manifest names the tools\n%q\nthe bundle serves\n%q", named, served)
	}
	checkPrompts(t, ctx, cs, m.Prompts)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "aw_get_state", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("aw_get_state: %v %+v", err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, `"hostname":"vm"`) {
		t.Errorf("aw_get_state does not show the recorded server's hostname:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 {
		t.Fatal("awbridge never reached ActivityWatch at the configured URL")
	}
	for _, a := range auth {
		if a != "" {
			t.Fatalf("with the API key left blank awbridge sent Authorization %q", a)
		}
	}
}

// TestManifests checks every OS's manifest against the bundle format's
// schema, and that its command resolves to files the bundle holds.
func TestManifests(t *testing.T) {
	schema := compileSchema(t, "testdata/mcpb-manifest-v0.3.schema.json")
	offer := served{tools: []tool{{"nowframe_build", "What is the person doing now"}},
		prompts: []prompt{{"standup", "A standup note", []string{"period"}, "Report ${arguments.period}."}}}
	for _, b := range bundles() {
		t.Run(b.goos, func(t *testing.T) {
			dir := t.TempDir()
			if err := stage(dir, b, "1.2.3", offer, fakeBinaries(t, b)); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(doc); err != nil {
				t.Fatalf("manifest.json: %v", err)
			}
			m := readManifest(t, dir)
			for key, opt := range m.UserConfig {
				if opt.Default != "" && !opt.Required {
					t.Errorf("user_config %s can be cleared: Claude Desktop would pass \"\", not its default", key)
				}
			}
			command, args, env := resolve(m, dir, b.platform, nil)
			for _, st := range settings() {
				if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, st.env+"=") }) {
					t.Errorf("on %s the bundle runs without %s: %q", b.platform, st.env, env)
				}
			}
			run := command
			if command == "/bin/sh" {
				run = args[0]
			}
			if _, err := os.Stat(run); err != nil {
				t.Errorf("on %s the bundle runs %s %v: %v", b.platform, command, args, err)
			}
		})
	}
}

// TestLauncher runs the launcher as Claude Desktop does, with /bin/sh on a
// file at mode 0600, on machines of every kind.
func TestLauncher(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows runs the .exe itself")
	}
	tests := []struct{ os, arch, want string }{
		{"Linux", "x86_64", "linux-amd64"},
		{"Linux", "aarch64", "linux-arm64"},
		{"Darwin", "arm64", "darwin-all"},
		{"Darwin", "x86_64", "darwin-all"},
		{"FreeBSD", "amd64", ""},
		{"Linux", "riscv64", ""},
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, launcher), launcherText, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"darwin-all", "linux-amd64", "linux-arm64"} {
		p := filepath.Join(dir, "server", arch, "awbridge")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+arch+" \"$@\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fake := t.TempDir()
	uname := "#!/bin/sh\ncase $1 in -s) echo \"$FAKE_OS\" ;; -m) echo \"$FAKE_ARCH\" ;; esac\n"
	if err := os.WriteFile(filepath.Join(fake, "uname"), []byte(uname), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.os+"-"+tt.arch, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", filepath.Join(dir, launcher), "stdio", "--x")
			cmd.Env = []string{"PATH=" + fake + ":/usr/bin:/bin", "FAKE_OS=" + tt.os, "FAKE_ARCH=" + tt.arch}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tt.want == "" {
				if err == nil || stdout.Len() > 0 || !strings.Contains(stderr.String(), "no binary for "+tt.os+" "+tt.arch) {
					t.Errorf("err %v, stdout %q, stderr %q: want a failure that names the machine, nothing on stdout", err, stdout.String(), stderr.String())
				}
				return
			}
			if err != nil || stdout.String() != tt.want+" stdio --x\n" {
				t.Errorf("ran %q (err %v, stderr %q), want %s with the arguments", stdout.String(), err, stderr.String(), tt.want)
			}
		})
	}
}

// TestServerJSON checks server.json against the MCP Registry's schema and
// rules, and each bundle it lists against the file: the same SHA-256, the
// same version in the bundle's manifest, a line in checksums.txt.
func TestServerJSON(t *testing.T) {
	dist := givenDist()
	if dist == "" {
		dist = t.TempDir()
		var files []string
		for _, b := range bundles() {
			f := filepath.Join(dist, bundleName("1.2.3", b.goos))
			zipDir(t, stageFake(t, b, "1.2.3"), f)
			files = append(files, f)
		}
		sj, err := serverJSON("1.2.3", files)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dist, "server.json"), sj, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := addChecksums(filepath.Join(dist, "checksums.txt"), files); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dist, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t, "testdata/server.schema.json").Validate(doc); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	var s registryServer
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	// The registry's own rules, beyond the schema.
	if !strings.HasPrefix(s.Name, "io.github.awbridge/") || len(s.Description) > 100 || len(s.Packages) == 0 {
		t.Errorf("name %q, description of %d bytes, %d packages", s.Name, len(s.Description), len(s.Packages))
	}
	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Packages {
		name := p.Identifier[strings.LastIndex(p.Identifier, "/")+1:]
		if !strings.HasPrefix(p.Identifier, "https://github.com/awbridge/awbridge/releases/download/v"+s.Version+"/") ||
			!strings.Contains(name, "mcp") || p.Transport.Type != "stdio" || p.Version != s.Version {
			t.Errorf("package %+v", p)
		}
		f := filepath.Join(dist, name)
		sum, err := sha256File(f)
		if err != nil {
			t.Fatal(err)
		}
		if sum != p.FileSha256 {
			t.Errorf("%s: server.json says sha256 %s, the file is %s", name, p.FileSha256, sum)
		}
		if !strings.Contains(string(sums), sum+"  "+name+"\n") {
			t.Errorf("checksums.txt has no line for %s", name)
		}
		if v := readManifest(t, unpack0600(t, f)).Version; v != s.Version {
			t.Errorf("%s holds version %s, server.json says %s", name, v, s.Version)
		}
	}
}

// bundleUnderTest is this OS's bundle from $AWBRIDGE_DIST, else one made
// here around a freshly built binary for this machine alone.
func bundleUnderTest(t *testing.T) string {
	t.Helper()
	if dist := givenDist(); dist != "" {
		files, _ := filepath.Glob(filepath.Join(dist, "awbridge_*_"+runtime.GOOS+".mcpb"))
		if len(files) != 1 {
			t.Fatalf("%s=%s holds %d bundles for %s, want 1", distEnv, dist, len(files), runtime.GOOS)
		}
		return files[0]
	}
	dist := t.TempDir()
	key := hostTarget()
	goos, arch, _ := strings.Cut(key, "-")
	dirName := "awbridge_" + goos + "_" + arch
	if goos == "darwin" {
		dirName = "awbridge-macos_darwin_all"
	}
	out := filepath.Join(dist, dirName, "awbridge")
	if goos == "windows" {
		out += ".exe"
	}
	build := exec.Command("go", "build", "-trimpath", "-o", out, "github.com/awbridge/awbridge/cmd/awbridge")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	bins, err := findBinaries(dist)
	if err != nil {
		t.Fatal(err)
	}
	offer, err := listServed(context.Background(), bins[key])
	if err != nil {
		t.Fatal(err)
	}
	b := hostBundle(t)
	b.arches = []string{arch}
	dir := filepath.Join(dist, "stage")
	if err := stage(dir, b, "0.0.0-test", offer, bins); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dist, bundleName("0.0.0-test", goos))
	zipDir(t, dir, file)
	return file
}

func hostBundle(t *testing.T) bundle {
	t.Helper()
	for _, b := range bundles() {
		if b.goos == runtime.GOOS {
			return b
		}
	}
	t.Skipf("awbridge makes no bundle for %s", runtime.GOOS)
	return bundle{}
}

// platform is this machine's name in a manifest.
func platform() string {
	if runtime.GOOS == "windows" {
		return "win32"
	}
	return runtime.GOOS
}

// resolve is the command, arguments and environment a client runs for
// the manifest unpacked in dir on platform, with the user's settings uc,
// as mcpb's getMcpConfigForManifest makes them: the platform's override
// replaces each of command, args and env it names (env whole, not merged);
// ${__dirname} is dir; a ${user_config.KEY} is the user's value (even ""),
// else the setting's default, else (Claude Desktop's way with a blank
// optional setting) left as it is.
func resolve(m manifest, dir, platform string, uc map[string]string) (string, []string, []string) {
	c := m.Server.MCPConfig
	if o, ok := c.PlatformOverrides[platform]; ok {
		c.Command = cmp.Or(o.Command, c.Command)
		if o.Args != nil {
			c.Args = o.Args
		}
		if o.Env != nil {
			c.Env = o.Env
		}
	}
	pairs := []string{"${__dirname}", dir, "${/}", string(filepath.Separator), "${pathSeparator}", string(filepath.Separator)}
	for key, opt := range m.UserConfig {
		if v, ok := uc[key]; ok {
			pairs = append(pairs, "${user_config."+key+"}", v)
		} else if opt.Default != "" {
			pairs = append(pairs, "${user_config."+key+"}", opt.Default)
		}
	}
	r := strings.NewReplacer(pairs...)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = r.Replace(a)
	}
	var env []string
	for k, v := range c.Env {
		env = append(env, k+"="+r.Replace(v))
	}
	return filepath.FromSlash(r.Replace(c.Command)), args, env
}

// isolated is an environment with its own home and no running service.
func isolated(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home,
		"AWBRIDGE_SOCKET=" + filepath.Join(home, "none.sock"), "TZ=UTC"}
}

func readManifest(t *testing.T, dir string) manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// unpack0600 unpacks a bundle as Claude Desktop on macOS does: every file
// at mode 0600, whatever the zip says.
func unpack0600(t *testing.T, file string) string {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dir := t.TempDir()
	for _, f := range zr.File {
		if !filepath.IsLocal(f.Name) {
			t.Fatalf("%s holds %q, outside the bundle", file, f.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// zipDir packs dir's files into file (what mcpb pack does).
func zipDir(t *testing.T, dir, file string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(file, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// fakeBinaries stands a small file in for each of b's binaries.
func fakeBinaries(t *testing.T, b bundle) map[string]string {
	t.Helper()
	bins := map[string]string{}
	for _, arch := range b.arches {
		p := filepath.Join(t.TempDir(), "awbridge")
		if err := os.WriteFile(p, []byte(b.goos+"-"+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins[b.goos+"-"+arch] = p
	}
	return bins
}

func stageFake(t *testing.T, b bundle, version string) string {
	t.Helper()
	dir := t.TempDir()
	if err := stage(dir, b, version, served{tools: []tool{{"help", "Help"}}}, fakeBinaries(t, b)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func compileSchema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "file:///" + filepath.Base(file)
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustFixtures(t *testing.T) map[string]*awfixture.Exchange {
	t.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// checkPrompts checks that the manifest's prompts are the ones the bundle
// serves: the same names, descriptions and arguments, and each text, with
// its arguments filled in as a client fills ${arguments.NAME}, what
// prompts/get answers for the same arguments.
func checkPrompts(t *testing.T, ctx context.Context, cs *sdk.ClientSession, named []prompt) {
	t.Helper()
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Fatal("the bundle advertises no prompts")
	}
	listed, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []prompt
	for _, p := range listed.Prompts {
		mp := prompt{Name: p.Name, Description: p.Description, Arguments: []string{}}
		args, pairs := map[string]string{}, []string{}
		for i, a := range p.Arguments {
			mp.Arguments = append(mp.Arguments, a.Name)
			args[a.Name] = fmt.Sprintf("last_%dd", i+2) // a period every prompt's argument takes
			pairs = append(pairs, "${arguments."+a.Name+"}", args[a.Name])
		}
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: args})
		if err != nil || len(res.Messages) != 1 {
			t.Fatalf("prompts/get %s: %v %+v", p.Name, err, res)
		}
		served := res.Messages[0].Content.(*sdk.TextContent).Text
		i := slices.IndexFunc(named, func(n prompt) bool { return n.Name == p.Name })
		if i >= 0 && strings.NewReplacer(pairs...).Replace(named[i].Text) != served {
			t.Errorf("prompt %s: the manifest's text, filled in, is\n%s\nthe bundle serves\n%s", p.Name,
				strings.NewReplacer(pairs...).Replace(named[i].Text), served)
		}
		if i >= 0 {
			mp.Text = named[i].Text
		}
		got = append(got, mp)
	}
	if !slices.EqualFunc(got, named, func(a, b prompt) bool {
		return a.Name == b.Name && a.Description == b.Description && slices.Equal(a.Arguments, b.Arguments) && a.Text == b.Text
	}) {
		t.Errorf("the manifest names the prompts\n%+v\nthe bundle serves\n%+v", named, got)
	}
}

// TestPackPinsDate runs pack with a stand-in for the mcpb tool (Node, as
// the real one is) in a release folder whose path has a space and a quote,
// as a checkout's may: the tool must start, and the clock it sees must be
// SOURCE_DATE_EPOCH's.
func TestPackPinsDate(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	tool := filepath.Join(t.TempDir(), "fake-mcpb.js")
	script := `const [cmd, ...rest] = process.argv.slice(2);
if (cmd === "pack") require("fs").writeFileSync(rest[1], String(Date.now()));
`
	if err := os.WriteFile(tool, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(t.TempDir(), `my "release" folder`)
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	out := filepath.Join(dist, "x.mcpb")
	var log bytes.Buffer
	if err := pack(context.Background(), node+" "+tool, stageFake(t, bundles()[1], "1.2.3"), out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "1700000000000" {
		t.Errorf("the tool's clock read %q (%v), want SOURCE_DATE_EPOCH's 1700000000000", got, err)
	}
}

// TestFindBinariesOddFolder finds the binaries in a release folder whose
// path has glob characters, as a checkout's may ("awbridge [old]").
func TestFindBinariesOddFolder(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "awbridge [old]", "dist")
	want := map[string]string{}
	for dir, key := range map[string]string{"awbridge_linux_amd64_v1": "linux-amd64", "awbridge-macos_darwin_all": "darwin-all",
		"awbridge_windows_amd64_v1": "windows-amd64"} {
		name := "awbridge"
		if strings.HasPrefix(key, "windows") {
			name += ".exe"
		}
		p := filepath.Join(dist, dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		want[key] = p
	}
	// Files a release holds beside them: never binaries.
	for _, f := range []string{"awbridge_1.2.3_linux_amd64.tar.gz", "awbridge_1.2.3_linux.mcpb", "checksums.txt"} {
		if err := os.WriteFile(filepath.Join(dist, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := findBinaries(dist)
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("findBinaries(%q) = %v, %v; want %v", dist, got, err, want)
	}
}

// TestRunUnknownOS: a misspelt -os is an error before anything is made,
// not a release without that OS's bundle.
func TestRunUnknownOS(t *testing.T) {
	for _, oses := range []string{"linux,drawin", "linux, darwin", ""} {
		err := run(context.Background(), []string{"-dist", t.TempDir(), "-version", "1.2.3", "-os", oses, "-mcpb", "false"}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-os") {
			t.Errorf("-os %q: %v, want an error about -os", oses, err)
		}
	}
}
