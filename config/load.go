package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

func str(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

func duration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) (err error) { *field(c), err = time.ParseDuration(v); return err }
}

func integer[T int | int64](field func(*Config) *T) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		*field(c) = T(n)
		return nil
	}
}

func float(field func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) (err error) { *field(c), err = strconv.ParseFloat(v, 64); return err }
}

func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) (err error) { *field(c), err = strconv.ParseBool(v); return err }
}

func list(field func(*Config) *[]string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*field(c) = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*field(c) = append(*field(c), p)
			}
		}
		return nil
	}
}

// Default returns the configuration used when nothing is set: DynamoDB Local
// on its usual port, so a newcomer needs no cloud account.
func Default() Config {
	c := Config{DefaultPageLimit: 100, MaxPageLimit: 1000}
	for _, s := range Settings {
		if s.Default != "" {
			if err := s.set(&c, s.Default); err != nil {
				panic(fmt.Sprintf("config: the default of %s: %v", s.Env, err)) // a wrong table, held by TestDefaultsParse
			}
		}
	}
	c.ShutdownTimeout = max(c.RequestTimeout, c.WriteTimeout) + shutdownMargin
	return c
}

// Load reads the settings command uses (Setting.Commands) from the
// environment through getenv, then from the stack file for those the
// environment leaves unset, then parses args, whose flags override both, and
// validates the result. It returns the remaining positional arguments. A
// command adds flags of its own through more; Load's error for -h or --help
// is flag.ErrHelp.
func Load(getenv func(string) string, args []string, command string, more ...func(*flag.FlagSet, *Config)) (Config, []string, error) {
	c := Default()
	var errs []error
	given := map[string]bool{} // by variable: set by the environment, the stack file or a flag
	stack, stackPath, err := readStackFile(getenv, command)
	if err != nil {
		errs = append(errs, err)
	}
	for _, s := range Settings {
		if !s.For(command) || s.Env == "FUNDSVC_STACK_FILE" {
			continue
		}
		v, from := strings.TrimSpace(getenv(s.Env)), ""
		if v == "" && s.AltEnv != "" {
			v = strings.TrimSpace(getenv(s.AltEnv))
		}
		if v == "" {
			if v = stack[s.Env]; v != "" {
				from = "stack"
			}
		}
		if v == "" {
			continue
		}
		given[s.Env] = true
		if err := s.set(&c, v); err != nil {
			if from == "stack" {
				errs = append(errs, fmt.Errorf("%s (from %s): %w", s.Env, stackPath, err))
			} else {
				errs = append(errs, fmt.Errorf("%s: %w", s.Env, err))
			}
			continue
		}
		if from == "stack" {
			c.FromStackFile = append(c.FromStackFile, s.Env)
			if c.stackShown == nil {
				c.stackShown = map[string]string{}
			}
			c.stackShown[s.Env] = v
			if s.Secret {
				c.stackShown[s.Env] = "(secret)"
			}
		}
	}

	fs := flag.NewFlagSet("fundsvc "+command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	RegisterFlags(fs, &c, command)
	for _, add := range more {
		add(fs, &c)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, err
		}
		return c, nil, fmt.Errorf("fundsvc %s: %w", command, err)
	}
	if len(errs) > 0 {
		return c, nil, errors.Join(errs...)
	}
	fs.Visit(func(f *flag.Flag) {
		if s, ok := SettingOfFlag(f.Name); ok {
			given[s.Env] = true
			c.FromStackFile = slices.DeleteFunc(c.FromStackFile, func(env string) bool { return env == s.Env })
		}
	})
	if !given["FUNDSVC_SHUTDOWN_TIMEOUT"] {
		// A request in flight when shutdown begins may run for its whole
		// timeout; the grace covers the longest, so SIGTERM never cuts off
		// a restatement.
		c.ShutdownTimeout = max(c.RequestTimeout, c.WriteTimeout) + shutdownMargin
	}
	if len(c.FromStackFile) > 0 {
		c.StackFile = stackPath
	}
	return c, fs.Args(), c.Validate()
}

// RegisterFlags defines on fs the flags of the settings command reads,
// each setting its field of c.
func RegisterFlags(fs *flag.FlagSet, c *Config, command string) {
	for i := range Settings {
		if s := &Settings[i]; s.Flag != "" && s.For(command) {
			fs.Var(settingValue{s, c}, s.Flag, s.Doc)
		}
	}
}

// settingValue is a setting's flag.
type settingValue struct {
	s *Setting
	c *Config
}

func (v settingValue) String() string { return "" }

func (v settingValue) Set(x string) error { return v.s.set(v.c, x) }

// SettingOfFlag returns the setting whose flag is name, if there is one.
func SettingOfFlag(name string) (Setting, bool) {
	for _, s := range Settings {
		if s.Flag == name {
			return s, true
		}
	}
	return Setting{}, false
}

// readStackFile reads the stack file FUNDSVC_STACK_FILE names (default
// DefaultStackFile, skipped when missing) if command reads one: KEY=VALUE
// lines of the settings' variables, blank lines and # comments. It returns
// nil when there is none.
func readStackFile(getenv func(string) string, command string) (map[string]string, string, error) {
	if !slices.Contains(allCommands, command) {
		return nil, "", nil
	}
	path := strings.TrimSpace(getenv("FUNDSVC_STACK_FILE"))
	explicit := path != ""
	if !explicit {
		path = DefaultStackFile
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("FUNDSVC_STACK_FILE: %w", err)
	}
	known := map[string]bool{}
	for _, s := range Settings {
		known[s.Env] = true
	}
	vars := map[string]string{}
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		switch {
		case !ok:
			return nil, "", fmt.Errorf("stack file %s, line %d: want KEY=VALUE", path, n+1)
		case !known[k] || k == "FUNDSVC_STACK_FILE":
			return nil, "", fmt.Errorf("stack file %s, line %d: %s is no setting of fundsvc", path, n+1, k)
		}
		vars[k] = strings.TrimSpace(v)
	}
	return vars, path, nil
}

// StackNotice is the line a command writes to standard error when it used
// the stack file: which settings came from it, secrets left out.
func (c Config) StackNotice() string {
	if c.StackFile == "" {
		return ""
	}
	var parts []string
	for _, env := range c.FromStackFile {
		parts = append(parts, env+"="+c.stackShown[env])
	}
	return fmt.Sprintf("fundsvc: using the stack file %s (make run's local stack; a flag or variable overrides it): %s", c.StackFile, strings.Join(parts, ", "))
}
