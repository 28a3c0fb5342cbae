package config

import (
	"strings"
	"testing"
)

// {ssh} is a placeholder like the others: inside code a shell parses it is
// refused at load; as a separate argument it loads.
func TestNotifySSHPlaceholderRefusedInShellCode(t *testing.T) {
	for _, argv := range [][]string{
		{"sh", "-c", "notify-send Vigil 'open: {ssh}'"},
		{"bash", "-lc", "echo {ssh}"},
		{"ssh", "desktop", "notify-send", "{ssh}"},
	} {
		_, err := Load(write(t, "[notify]\ncommand = "+tomlArray(argv)+"\n"), "/")
		if err == nil || !strings.Contains(err.Error(), "a placeholder inside code") {
			t.Errorf("%q: got %v, want the placeholder refused", argv, err)
		}
	}
	for _, argv := range [][]string{
		{"notify-send", "Vigil", "{agent} asks to {action}: {ssh}"},
		{"sh", "-c", `notify-send Vigil "$VIGIL_SSH"`},
		{"sh", "-c", `notify-send Vigil "$1"`, "sh", "{ssh}"},
	} {
		if _, err := Load(write(t, "[notify]\ncommand = "+tomlArray(argv)+"\n"), "/"); err != nil {
			t.Errorf("%q: %v", argv, err)
		}
	}
}

func TestSSHCommand(t *testing.T) {
	cases := []struct {
		addr string
		args []string
		want string
	}{
		{"vigil@gate.example:2222", []string{"preview", "task-1"}, "ssh -p 2222 vigil@gate.example preview task-1"},
		{"gate.example:2222", []string{"preview", "t:1.a_b"}, "ssh -p 2222 gate.example preview t:1.a_b"},
		{"vigil@gate.example:22", nil, "ssh vigil@gate.example"},
		{"127.0.0.1:2222", nil, "ssh -p 2222 127.0.0.1"},
		{"[::1]:2222", []string{"pending"}, "ssh -p 2222 ::1 pending"},
		// no host one could reach: the listen address of --ssh :2222
		{"", nil, ""},
		{":2222", nil, ""},
		{"0.0.0.0:2222", nil, ""},
		{"[::]:2222", nil, ""},
		{"gate.example", nil, ""},
		{"@gate.example:2222", nil, ""},
		// never anything a shell or ssh reads as more than a word
		{"-oProxyCommand=x@gate:22", nil, ""},
		{"vigil@-oProxyCommand=x:22", nil, ""},
		{"a b@gate:22", nil, ""},
		{"$(touch x)@gate:22", nil, ""},
		{"gate:22", []string{"preview", "x;rm"}, ""},
		{"gate:22", []string{"preview", ""}, ""},
	}
	for _, c := range cases {
		if got := SSHCommand(c.addr, c.args...); got != c.want {
			t.Errorf("SSHCommand(%q, %q) = %q, want %q", c.addr, c.args, got, c.want)
		}
	}
}

// The refusal names the SSH command when [ssh] advertise is set, the
// shared queue when there is one, and the missing operators.
func TestDecisionsRefusal(t *testing.T) {
	c := Default()
	if got := c.DecisionsRefusal(); got != "" {
		t.Fatalf("a home taking local decisions is refused: %q", got)
	}
	c.Decisions.RequireOperatorKey = true
	got := c.DecisionsRefusal()
	for _, want := range []string{"Decisions on this home are made by an operator over SSH", "[ssh] advertise",
		"this account can read tasks but not decide", "No [[operators]]"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	if strings.Contains(got, "queue") {
		t.Errorf("no shared queue here, yet named: %q", got)
	}
	c.SSH.Advertise = "vigil@gate.example:2222"
	c.Operators = []OperatorConfig{{Name: "ada"}}
	c.Queue.URL = "nats://127.0.0.1:4222"
	got = c.DecisionsRefusal()
	for _, want := range []string{"(ssh -p 2222 vigil@gate.example)", "shared queue's operator credentials"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	if strings.Contains(got, "No [[operators]]") {
		t.Errorf("operators are listed, yet said missing: %q", got)
	}
}
