package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/config"
)

// helpOf runs args (which ask for help) and returns what they print.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), args, func(string) string { return "" }, &out); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String()
}

// TestHelpShowsEveryFlagAndVariable holds each command's help to what the
// command really reads: every flag config.Load defines for it (its
// settings' and its own) with its default, and every FUNDSVC_ variable
// Load reads for it, with its default. The flags and variables are
// collected from Load itself, not from the help's own listing.
func TestHelpShowsEveryFlagAndVariable(t *testing.T) {
	overview := helpOf(t, "help")
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			read := map[string]bool{}
			getenv := func(k string) string {
				mu.Lock()
				defer mu.Unlock()
				read[k] = true
				return ""
			}
			var defined []*flag.Flag
			capture := func(fs *flag.FlagSet, _ *config.Config) {
				fs.VisitAll(func(f *flag.Flag) { defined = append(defined, f) })
			}
			if _, _, err := config.Load(getenv, []string{"-h"}, c.settings(), c.register(&flags{}), capture); err != flag.ErrHelp {
				t.Fatalf("Load with -h: %v", err)
			}
			if len(defined) == 0 && c.name != "table create" && c.name != "table describe" {
				t.Fatalf("no flags seen: the test is not seeing the command's flag set")
			}

			help := helpOf(t, append(strings.Fields(c.name), "-h")...)
			for _, other := range [][]string{append(strings.Fields(c.name), "--help"), append([]string{"help"}, strings.Fields(c.name)...)} {
				if got := helpOf(t, other...); got != help {
					t.Errorf("%v prints another help than -h:\n%s", other, got)
				}
			}
			if !strings.HasPrefix(help, "usage: fundsvc "+c.name+" [flags]") {
				t.Errorf("help does not begin with the usage line:\n%s", help)
			}
			for _, f := range defined {
				entry := flagEntry(help, f.Name)
				if entry == "" {
					t.Errorf("--%s is not in the help", f.Name)
					continue
				}
				if !strings.Contains(overview, "--"+f.Name) {
					t.Errorf("fundsvc help does not list --%s under %s", f.Name, c.name)
				}
				if s, ok := config.SettingOfFlag(f.Name); ok && s.For(c.settings()) {
					if !strings.Contains(entry, s.Env) || !strings.Contains(entry, s.DefaultText()) {
						t.Errorf("--%s: its entry lacks its variable %s or its default %q:\n%s", f.Name, s.Env, s.DefaultText(), entry)
					}
				} else if !zero(f) && !strings.Contains(entry, "(default "+f.DefValue+")") {
					t.Errorf("--%s: its entry lacks its default %s:\n%s", f.Name, f.DefValue, entry)
				}
			}
			n := 0
			for k := range read {
				if !strings.HasPrefix(k, "FUNDSVC_") {
					continue
				}
				n++
				s := settingOfEnv(t, k)
				entry := flagEntry(help, s.Flag)
				if s.Flag == "" {
					entry = envEntry(help, k)
				}
				if !regexp.MustCompile(`\b`+k+`\b`).MatchString(entry) || !strings.Contains(entry, s.DefaultText()) {
					t.Errorf("%s, which %s reads, is not in its help with its default %q:\n%s", k, c.name, s.DefaultText(), help)
				}
			}
			switch {
			case c.noSettings && (n > 0 || strings.Contains(help, "FUNDSVC_")):
				t.Errorf("%s reads no settings, but Load read %d FUNDSVC_ variables or its help names one:\n%s", c.name, n, help)
			case !c.noSettings && n == 0:
				t.Errorf("Load read no FUNDSVC_ variable: the test is not seeing what the command reads")
			}
		})
	}
	for _, want := range []string{"export", "--since-last", "--settle", "--wait-for-table", "seed", "--reset", "version", "table describe"} {
		if !strings.Contains(overview, want) {
			t.Errorf("fundsvc help does not list %s:\n%s", want, overview)
		}
	}
}

// flagEntry is the help's entry of flag name: its line and the indented
// lines under it.
func flagEntry(help, name string) string {
	if name == "" {
		return ""
	}
	m := regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(name) + `( .*)?\n(      .*\n)+`).FindString(help)
	return strings.Join(strings.Fields(m), " ")
}

// envEntry is the help's entry of an environment-only variable.
func envEntry(help, env string) string {
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(env) + ` .*\n(      .*\n)+`).FindString(help)
	return strings.Join(strings.Fields(m), " ")
}

func settingOfEnv(t *testing.T, env string) config.Setting {
	t.Helper()
	for _, s := range config.Settings {
		if s.Env == env {
			return s
		}
	}
	t.Fatalf("%s is in no row of config.Settings", env)
	return config.Setting{}
}

// TestHelpAndVersionAsk for nothing: help of an unknown command is an
// error, version prints the build.
func TestHelpOfUnknownCommandIsRefused(t *testing.T) {
	err := run(context.Background(), []string{"help", "launch"}, func(string) string { return "" }, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `no command "launch"`) {
		t.Errorf("help launch: %v", err)
	}
	table := helpOf(t, "table", "-h")
	if !strings.Contains(table, "usage: fundsvc table create") || !strings.Contains(table, "usage: fundsvc table describe") {
		t.Errorf("table -h shows not both subcommands:\n%s", table)
	}
}

// TestCommandLineReadsSettingsOnlyThroughConfig: no FUNDSVC_ variable is
// read in cmd/ but through config's table, where the help finds it.
func TestCommandLineReadsSettingsOnlyThroughConfig(t *testing.T) {
	direct := regexp.MustCompile(`(?i)getenv\(\s*"FUNDSVC_`)
	files, _ := filepath.Glob("../../*/*.go")
	more, _ := filepath.Glob("../../internal/*/*.go")
	checked := 0
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if loc := direct.FindIndex(b); loc != nil {
			t.Errorf("%s reads a FUNDSVC_ variable itself (line %d): add it to config.Settings", f, bytes.Count(b[:loc[0]], []byte("\n"))+1)
		}
	}
	if checked < 8 {
		t.Fatalf("only %d files checked", checked)
	}
}
