package config

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// QueueConfig is the [queue] section: with URL set, the home's approval
// queue is the shared one on a NATS JetStream server (docs/queue.md); empty,
// everything stays in the home folder as before.
type QueueConfig struct {
	// URL is the server, "nats://host:4222" or "tls://host:4222"; several
	// servers of one cluster may be listed, comma-separated.
	URL string `toml:"url,omitempty" json:"url,omitempty"`
	// CredsFile is a NATS credentials file (user JWT + nkey seed).
	CredsFile string `toml:"creds_file,omitempty" json:"creds_file,omitempty"`
	// TokenEnv names the environment variable holding a token.
	TokenEnv string `toml:"token_env,omitempty" json:"token_env,omitempty"`
	// UserEnv and PasswordEnv name the environment variables holding a
	// user name and password (both or neither).
	UserEnv     string `toml:"user_env,omitempty" json:"user_env,omitempty"`
	PasswordEnv string `toml:"password_env,omitempty" json:"password_env,omitempty"`
	// CAFile trusts the server's certificate authority; CertFile and
	// KeyFile are the client certificate for mutual TLS (both or neither).
	CAFile   string `toml:"ca_file,omitempty" json:"ca_file,omitempty"`
	CertFile string `toml:"cert_file,omitempty" json:"cert_file,omitempty"`
	KeyFile  string `toml:"key_file,omitempty" json:"key_file,omitempty"`
	// Replicas is how many servers of a cluster keep each of Vigil's
	// streams and its bucket when Vigil creates them: 1 (the default, also
	// when 0) to 5; 3 for a three-node cluster.
	Replicas int `toml:"replicas,omitempty" json:"replicas,omitempty"`
	// Agent is, on an agent's home, the [[agents]] name the executor knows
	// it by: its submissions go to that agent's own subject, which only its
	// NATS user may publish on, and the executor mints the lease of one that
	// brings none under the agent's grants (docs/queue.md). Empty: the
	// shared subjects, where every submission brings its lease.
	Agent string `toml:"agent,omitempty" json:"agent,omitempty"`
}

// MaxReplicas is the most JetStream keeps of a stream.
const MaxReplicas = 5

// Enabled says whether the shared queue is configured.
func (q QueueConfig) Enabled() bool { return q.URL != "" }

// Resolved returns q with its relative file paths made absolute against dir
// (the config file's folder), as Load does for the other sections' paths.
func (q QueueConfig) Resolved(dir string) QueueConfig {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	q.CredsFile, q.CAFile, q.CertFile, q.KeyFile = abs(q.CredsFile), abs(q.CAFile), abs(q.CertFile), abs(q.KeyFile)
	return q
}

// Validate checks the section; every error names its TOML key.
func (q QueueConfig) Validate() error {
	if q.Replicas < 0 || q.Replicas > MaxReplicas {
		return &Error{Key: "queue.replicas", Rule: fmt.Sprintf("must be 1 to %d, got %d", MaxReplicas, q.Replicas)}
	}
	if q.URL == "" {
		if q.Replicas != 0 {
			return &Error{Key: "queue.replicas", Rule: "is set but queue.url is not; set queue.url or remove the [queue] section"}
		}
		for _, kv := range [][2]string{{"queue.agent", q.Agent}, {"queue.creds_file", q.CredsFile}, {"queue.token_env", q.TokenEnv},
			{"queue.user_env", q.UserEnv}, {"queue.password_env", q.PasswordEnv}, {"queue.ca_file", q.CAFile},
			{"queue.cert_file", q.CertFile}, {"queue.key_file", q.KeyFile}} {
			if kv[1] != "" {
				return &Error{Key: kv[0], Rule: "is set but queue.url is not; set queue.url or remove the [queue] section"}
			}
		}
		return nil
	}
	for i, s := range strings.Split(q.URL, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" {
			return &Error{Key: "queue.url", Rule: fmt.Sprintf("server %d must be a URL like nats://host:4222", i+1)}
		}
		switch u.Scheme {
		case "nats", "tls":
		default:
			return &Error{Key: "queue.url", Rule: fmt.Sprintf("scheme must be nats or tls, got %q", u.Scheme)}
		}
		if u.User != nil {
			return &Error{Key: "queue.url", Rule: "must not carry credentials; use creds_file, token_env or user_env/password_env"}
		}
	}
	if q.Agent != "" && (strings.TrimSpace(q.Agent) != q.Agent || strings.ContainsFunc(q.Agent, unicode.IsControl) || strings.ContainsRune(q.Agent, ' ')) {
		return &Error{Key: "queue.agent", Rule: fmt.Sprintf("must be an [[agents]] name without spaces or control characters, got %q", q.Agent)}
	}
	auth := 0
	for _, set := range []bool{q.CredsFile != "", q.TokenEnv != "", q.UserEnv != "" || q.PasswordEnv != ""} {
		if set {
			auth++
		}
	}
	if auth > 1 {
		return &Error{Key: "queue", Rule: "choose one of creds_file, token_env, or user_env with password_env"}
	}
	if (q.UserEnv == "") != (q.PasswordEnv == "") {
		return &Error{Key: "queue.password_env", Rule: "user_env and password_env go together"}
	}
	if (q.CertFile == "") != (q.KeyFile == "") {
		return &Error{Key: "queue.key_file", Rule: "cert_file and key_file go together"}
	}
	for _, kv := range [][2]string{{"queue.creds_file", q.CredsFile}, {"queue.ca_file", q.CAFile},
		{"queue.cert_file", q.CertFile}, {"queue.key_file", q.KeyFile}} {
		if kv[1] == "" {
			continue
		}
		if fi, err := os.Stat(kv[1]); err != nil || !fi.Mode().IsRegular() {
			return &Error{Key: kv[0], Rule: fmt.Sprintf("must be a readable file, %s is not", kv[1])}
		}
	}
	return nil
}
