package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// vars is a getenv over a map.
func vars(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// stackFile writes a stack file of lines and returns its path.
func stackFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stack.env")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	env := map[string]string{"FUNDSVC_TABLE": "from-env", "FUNDSVC_LISTEN": "127.0.0.1:9000", "FUNDSVC_LOG_LEVEL": "debug", "AWS_REGION": "eu-west-1"}
	c, rest, err := Load(vars(env), []string{"--table", "from-flag", "extra"}, CmdServe)
	if err != nil {
		t.Fatal(err)
	}
	if c.Table != "from-flag" || c.Listen != "127.0.0.1:9000" || c.LogLevel != slog.LevelDebug || c.Region != "eu-west-1" {
		t.Fatalf("flags must override the environment, which overrides defaults: %+v", c)
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Fatalf("positional arguments %v", rest)
	}
	env["FUNDSVC_REGION"] = "ap-south-1"
	if c, _, _ := Load(vars(env), nil, CmdServe); c.Region != "ap-south-1" {
		t.Errorf("FUNDSVC_REGION must win over AWS_REGION: %s", c.Region)
	}
	d, _, err := Load(vars(nil), nil, CmdServe)
	if err != nil || d.Endpoint != "http://127.0.0.1:8000" || d.Listen != ":8080" || d.Table != "fundsvc" || d.ChangeShards != 8 ||
		d.ShutdownTimeout != 5*time.Minute+10*time.Second || d.IdempotencyTTL != 24*time.Hour || d.PublicMetrics || d.MetricsListen != "" || d.ExportFormat != FormatHive {
		t.Fatalf("defaults: %+v %v", d, err)
	}
}

func TestLoadReadsOnlyTheCommandsSettings(t *testing.T) {
	env := vars(map[string]string{"FUNDSVC_RATE_LIMIT": "lots", "FUNDSVC_JWT_HS256_SECRET": "0123456789abcdef0123456789abcdef"})
	if _, _, err := Load(env, nil, CmdToken); err != nil {
		t.Errorf("token, which has no rate limit, refused FUNDSVC_RATE_LIMIT: %v", err)
	}
	if _, _, err := Load(env, nil, CmdServe); err == nil || !strings.Contains(err.Error(), "FUNDSVC_RATE_LIMIT") {
		t.Errorf("serve accepted FUNDSVC_RATE_LIMIT=lots: %v", err)
	}
	if _, _, err := Load(env, []string{"--listen", "127.0.0.1:1"}, CmdExport); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -listen") {
		t.Errorf("export accepted serve's --listen: %v", err)
	}
}

func TestStackFileFillsWhatNothingElseSets(t *testing.T) {
	secret := "stack-secret-0123456789-abcdefghijkl"
	path := stackFile(t, "# written by make run", "", "FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:18001",
		"FUNDSVC_TABLE=fundsvc", "FUNDSVC_REGION=us-east-1", "FUNDSVC_LISTEN=127.0.0.1:18080", "FUNDSVC_JWT_HS256_SECRET="+secret)
	base := map[string]string{"FUNDSVC_STACK_FILE": path}

	t.Run("alone, it sets what it holds and says so", func(t *testing.T) {
		c, _, err := Load(vars(base), nil, CmdServe)
		if err != nil {
			t.Fatal(err)
		}
		if c.Endpoint != "http://127.0.0.1:18001" || c.Listen != "127.0.0.1:18080" || c.JWTSecret != secret || c.StackFile != path {
			t.Fatalf("%+v", c)
		}
		n := c.StackNotice()
		for _, want := range []string{path, "FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:18001", "FUNDSVC_LISTEN=127.0.0.1:18080", "FUNDSVC_JWT_HS256_SECRET=(secret)"} {
			if !strings.Contains(n, want) {
				t.Errorf("notice %q lacks %q", n, want)
			}
		}
		if strings.Contains(n, secret) || strings.Count(n, "\n") != 0 {
			t.Errorf("notice shows the secret or is not one line: %q", n)
		}
	})

	t.Run("the environment and flags win, each setting on its own", func(t *testing.T) {
		env := map[string]string{"FUNDSVC_STACK_FILE": path, "FUNDSVC_DYNAMODB_ENDPOINT": "http://127.0.0.1:9"}
		c, _, err := Load(vars(env), []string{"--listen", "127.0.0.1:7"}, CmdServe)
		if err != nil {
			t.Fatal(err)
		}
		if c.Endpoint != "http://127.0.0.1:9" || c.Listen != "127.0.0.1:7" || c.JWTSecret != secret {
			t.Fatalf("%+v", c)
		}
		if slices.Contains(c.FromStackFile, "FUNDSVC_DYNAMODB_ENDPOINT") || slices.Contains(c.FromStackFile, "FUNDSVC_LISTEN") ||
			strings.Contains(c.StackNotice(), "18080") || !strings.Contains(c.StackNotice(), "FUNDSVC_TABLE=fundsvc") {
			t.Errorf("the notice names settings the stack file did not supply: %v %q", c.FromStackFile, c.StackNotice())
		}
		c, _, err = Load(vars(map[string]string{"FUNDSVC_STACK_FILE": path, "FUNDSVC_DYNAMODB_ENDPOINT": "http://127.0.0.1:9",
			"FUNDSVC_TABLE": "mine", "FUNDSVC_REGION": "eu-west-1", "FUNDSVC_JWT_HS256_SECRET": strings.Repeat("s", 32)}), []string{"--listen", "127.0.0.1:7"}, CmdServe)
		if err != nil || c.StackFile != "" || c.StackNotice() != "" {
			t.Errorf("every setting given, the stack file is still reported: %q %q %v", c.StackFile, c.StackNotice(), err)
		}
	})

	t.Run("a command reads only its own settings from it", func(t *testing.T) {
		c, _, err := Load(vars(base), nil, CmdDDL)
		if err != nil {
			t.Fatal(err)
		}
		if c.Listen != ":8080" || c.JWTSecret != "" || !slices.Equal(c.FromStackFile, []string{"FUNDSVC_REGION"}) {
			t.Errorf("ddl took %v from the stack file", c.FromStackFile)
		}
	})

	t.Run("a missing default file is skipped, a missing named one refused", func(t *testing.T) {
		dir := t.TempDir()
		wd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
		if c, _, err := Load(vars(nil), nil, CmdExport); err != nil || c.StackFile != "" {
			t.Errorf("no .data/stack.env: %v %q", err, c.StackFile)
		}
		os.MkdirAll(".data", 0o700)
		os.WriteFile(DefaultStackFile, []byte("FUNDSVC_TABLE=from-default-file\n"), 0o600)
		if c, _, err := Load(vars(nil), nil, CmdExport); err != nil || c.Table != "from-default-file" || c.StackFile != DefaultStackFile {
			t.Errorf("the default file in the working directory: %v %+v", err, c)
		}
		if c, _, err := Load(vars(map[string]string{"FUNDSVC_STACK_FILE": "/dev/null"}), nil, CmdExport); err != nil || c.Table != "fundsvc" {
			t.Errorf("FUNDSVC_STACK_FILE=/dev/null: %v %q", err, c.Table)
		}
		_, _, err := Load(vars(map[string]string{"FUNDSVC_STACK_FILE": filepath.Join(dir, "nope.env")}), nil, CmdExport)
		if err == nil || !strings.Contains(err.Error(), "FUNDSVC_STACK_FILE") {
			t.Errorf("a missing named file: %v", err)
		}
	})

	for _, c := range []struct{ name, line, want string }{
		{"a line that is no assignment", "FUNDSVC_TABLE", "line 1: want KEY=VALUE"},
		{"a variable that is no setting", "FUNDSVC_TABEL=x", "line 1: FUNDSVC_TABEL is no setting"},
		{"a bad value", "FUNDSVC_WAIT_FOR_TABLE=soon", "FUNDSVC_WAIT_FOR_TABLE (from " + "%s" + ")"},
	} {
		t.Run("refuses "+c.name, func(t *testing.T) {
			p := stackFile(t, c.line)
			_, _, err := Load(vars(map[string]string{"FUNDSVC_STACK_FILE": p}), nil, CmdServe)
			want := c.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, p)
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %q", err, want)
			}
		})
	}
}

func TestHelpFlagIsErrHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		if _, _, err := Load(vars(nil), []string{arg}, CmdServe); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %v", arg, err)
		}
	}
}

func TestValidateNamesEveryBadSetting(t *testing.T) {
	env := map[string]string{"FUNDSVC_TABLE": "x", "FUNDSVC_DYNAMODB_ENDPOINT": "ftp://host", "FUNDSVC_LISTEN": "8080",
		"FUNDSVC_MAX_POSITIONS": "0", "FUNDSVC_CURSOR_KEY": "short", "FUNDSVC_CHANGE_SHARDS": "0", "FUNDSVC_WAIT_FOR_TABLE": "-1s"}
	_, _, err := Load(vars(env), nil, CmdServe)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"table", "endpoint", "listen", "max positions", "cursor key", "FUNDSVC_CHANGE_SHARDS", "FUNDSVC_WAIT_FOR_TABLE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
	_, _, err = Load(vars(map[string]string{"FUNDSVC_REQUEST_TIMEOUT": "soon"}), nil, CmdServe)
	if err == nil || !strings.Contains(err.Error(), "FUNDSVC_REQUEST_TIMEOUT") {
		t.Fatalf("unparseable duration: %v", err)
	}
	_, _, err = Load(vars(map[string]string{"FUNDSVC_EXPORT_FORMAT": "delta"}), nil, CmdExport)
	if err == nil || !strings.Contains(err.Error(), "want hive or iceberg") {
		t.Fatalf("an unknown format: %v", err)
	}
}

// TestSettingsTableIsWhole holds every row of Settings to what the derived
// flags, help and README need of it.
func TestSettingsTableIsWhole(t *testing.T) {
	envs, flags := map[string]bool{}, map[string]bool{}
	for _, s := range Settings {
		t.Run(s.Env, func(t *testing.T) {
			if !strings.HasPrefix(s.Env, "FUNDSVC_") || envs[s.Env] {
				t.Errorf("variable %q: not FUNDSVC_ or listed twice", s.Env)
			}
			envs[s.Env] = true
			if s.Flag != "" {
				if flags[s.Flag] {
					t.Errorf("flag --%s listed twice", s.Flag)
				}
				flags[s.Flag] = true
			}
			if s.Doc == "" || s.Arg == "" || len(s.Commands) == 0 || s.set == nil {
				t.Errorf("no doc, arg name, commands or parser: %+v", s)
			}
			if (s.Default == "") == (s.DefaultDoc == "") {
				t.Errorf("want a default or a sentence saying why there is none, not both or neither: %q %q", s.Default, s.DefaultDoc)
			}
			for _, cmd := range s.Commands {
				if !slices.Contains(allCommands, cmd) {
					t.Errorf("command %q is no command", cmd)
				}
			}
			if s.Default != "" {
				var c Config
				if err := s.set(&c, s.Default); err != nil {
					t.Errorf("its default %q does not parse: %v", s.Default, err)
				}
			}
		})
	}
}

var updateReadme = flag.Bool("update", false, "rewrite the README's settings table from Settings")

// TestReadmeTableIsTheSettings compares the README's configuration table,
// between its markers, with the one written from Settings; -update
// rewrites it.
func TestReadmeTableIsTheSettings(t *testing.T) {
	const begin, end = "<!-- settings: begin (go test ./config -run TestReadmeTableIsTheSettings -update) -->\n", "<!-- settings: end -->\n"
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, begin), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no settings table between %q and %q", begin, end)
	}
	want := settingsMarkdown()
	if got := readme[i+len(begin) : j]; got != want {
		if *updateReadme {
			if err := os.WriteFile("../README.md", []byte(readme[:i+len(begin)]+want+readme[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the README's settings table is not Settings' (go test ./config -run TestReadmeTableIsTheSettings -update):\n%s\nwant:\n%s", got, want)
	}
}

// settingsMarkdown is the README's table of Settings.
func settingsMarkdown() string {
	var b strings.Builder
	b.WriteString("| variable | flag | default | read by | what it sets |\n|---|---|---|---|---|\n")
	pipe := regexp.MustCompile(`\|`)
	for _, s := range Settings {
		v := "`" + s.Env + "`"
		if s.AltEnv != "" {
			v += " (or `" + s.AltEnv + "`)"
		}
		f := ""
		if s.Flag != "" {
			f = "`--" + s.Flag + " " + s.Arg + "`"
		}
		d := s.DefaultDoc
		if s.Default != "" {
			d = "`" + s.Default + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", v, pipe.ReplaceAllString(f, `\|`), pipe.ReplaceAllString(d, `\|`),
			strings.Join(s.Commands, ", "), pipe.ReplaceAllString(s.Doc, `\|`))
	}
	return b.String()
}
