package config

import (
	"log/slog"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	env := map[string]string{"FUNDSVC_TABLE": "from-env", "FUNDSVC_LISTEN": "127.0.0.1:9000", "FUNDSVC_LOG_LEVEL": "debug", "AWS_REGION": "eu-west-1"}
	c, rest, err := Load(func(k string) string { return env[k] }, []string{"--table", "from-flag", "extra"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if c.Table != "from-flag" || c.Listen != "127.0.0.1:9000" || c.LogLevel != slog.LevelDebug || c.Region != "eu-west-1" {
		t.Fatalf("flags must override the environment, which overrides defaults: %+v", c)
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Fatalf("positional arguments %v", rest)
	}
	d, _, err := Load(func(string) string { return "" }, nil, "test")
	if err != nil || d.Endpoint != "http://127.0.0.1:8000" || d.Listen != ":8080" || d.Table != "fundsvc" || d.ChangeShards != 8 {
		t.Fatalf("defaults: %+v %v", d, err)
	}
}

func TestValidateNamesEveryBadSetting(t *testing.T) {
	env := map[string]string{"FUNDSVC_TABLE": "x", "FUNDSVC_DYNAMODB_ENDPOINT": "ftp://host", "FUNDSVC_LISTEN": "8080",
		"FUNDSVC_MAX_POSITIONS": "0", "FUNDSVC_CURSOR_KEY": "short", "FUNDSVC_CHANGE_SHARDS": "0"}
	_, _, err := Load(func(k string) string { return env[k] }, nil, "test")
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"table", "endpoint", "listen", "max positions", "cursor key", "FUNDSVC_CHANGE_SHARDS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
	_, _, err = Load(func(k string) string { return map[string]string{"FUNDSVC_REQUEST_TIMEOUT": "soon"}[k] }, nil, "test")
	if err == nil || !strings.Contains(err.Error(), "FUNDSVC_REQUEST_TIMEOUT") {
		t.Fatalf("unparseable duration: %v", err)
	}
}
