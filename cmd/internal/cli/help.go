package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
)

// The help is written from what the commands register: the settings of
// config's table that each reads, and its own flags, so that a flag or a
// variable cannot exist without being shown.

// commandFlags is the flag set a command parses: its settings' flags and
// its own, as config.Load defines them.
func commandFlags(c command) *flag.FlagSet {
	fs := flag.NewFlagSet("fundsvc "+c.name, flag.ContinueOnError)
	var cfg config.Config
	config.RegisterFlags(fs, &cfg, c.settings())
	c.register(&flags{})(fs, &cfg)
	return fs
}

// writeOverview writes fundsvc help: every command with its flags.
func writeOverview(w io.Writer) {
	fmt.Fprint(w, `usage: fundsvc <command> [flags]

commands (fundsvc help COMMAND, or fundsvc COMMAND -h, shows a command's flags, settings and defaults):
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-17s %s\n", c.name, c.summary)
		var names []string
		commandFlags(c).VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
		if len(names) > 0 {
			writeWrapped(w, "                      ", strings.Join(names, " "))
		}
	}
	fmt.Fprintf(w, "  %-17s %s\n", "version", versionSummary)
	fmt.Fprintf(w, "  %-17s %s\n", "help", helpSummary)
	fmt.Fprint(w, `
Settings: a flag wins over its environment variable, which wins over the stack
file that make run writes (.data/stack.env, or FUNDSVC_STACK_FILE), which wins
over the default. A command that uses the stack file says so on standard error.
`)
}

// writeHelp writes the help of cmds: usage, what each does, every flag
// with its default and environment variable, then the settings that are
// environment variables only.
func writeHelp(w io.Writer, cmds []command) error {
	for i, c := range cmds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "usage: fundsvc %s [flags]%s\n\n", c.name, strings.TrimRight(" "+c.args, " "))
		writeWrapped(w, "", strings.ToUpper(c.summary[:1])+c.summary[1:]+".")
		if c.doc != "" {
			writeWrapped(w, "", c.doc)
		}
		fs := commandFlags(c)
		var n int
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
		}
		fs.VisitAll(func(f *flag.Flag) {
			arg, doc, def := "", f.Usage, f.DefValue
			if s, ok := config.SettingOfFlag(f.Name); ok && s.For(c.settings()) {
				arg, def = s.Arg, s.DefaultText()
				doc += " (" + defaultPart(def) + "; " + envNames(s) + ")"
			} else {
				arg, doc = flag.UnquoteUsage(f)
				if !zero(f) {
					doc += " (default " + def + ")"
				}
			}
			fmt.Fprintf(w, "  --%s", f.Name)
			if arg != "" {
				fmt.Fprintf(w, " %s", arg)
			}
			fmt.Fprintln(w)
			writeWrapped(w, "      ", doc)
		})
		first := true
		for _, s := range config.Settings {
			if s.Flag != "" || !s.For(c.settings()) {
				continue
			}
			if first {
				fmt.Fprintln(w, "\nenvironment (no flag):")
				first = false
			}
			fmt.Fprintf(w, "  %s %s\n", envNames(s), s.Arg)
			writeWrapped(w, "      ", s.Doc+" ("+defaultPart(s.DefaultText())+")")
		}
	}
	return nil
}

// defaultPart is "default X", or the sentence saying what happens unset.
func defaultPart(d string) string {
	if strings.Contains(d, " ") {
		return "default: " + d
	}
	return "default " + d
}

// envNames is a setting's variable, with the one read when it is unset.
func envNames(s config.Setting) string {
	if s.AltEnv != "" {
		return s.Env + " or " + s.AltEnv
	}
	return s.Env
}

// zero reports whether f's default is its type's zero value, which help
// leaves out.
func zero(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "0s", "false":
		return true
	}
	return false
}

// writeWrapped writes text in lines of at most 100 columns, each after
// indent.
func writeWrapped(w io.Writer, indent, text string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > 100 {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		fmt.Fprintln(w, line)
	}
}

// printVersion writes fundsvc version: the build the toolchain stamped.
func (p Program) printVersion(w io.Writer) error {
	b := api.ReadBuild()
	name := "fundsvc"
	if p.Iceberg != nil {
		name = IcebergBinary + " (fundsvc with the Iceberg publisher)"
	}
	rows := [][2]string{{"version", b.Version}, {"revision", b.Revision}, {"modified", fmt.Sprint(b.Modified)}, {"time", b.Time}, {"go", b.GoVersion}}
	if b.Revision == "" {
		rows = [][2]string{{"version", b.Version}, {"revision", "none recorded (built outside a VCS checkout, or with -buildvcs=false)"}, {"go", b.GoVersion}}
	}
	fmt.Fprintln(w, name)
	for _, r := range rows {
		fmt.Fprintf(w, "  %-9s %s\n", r[0], r[1])
	}
	return nil
}
