package preview

import (
	"encoding/base64"
	"strings"
	"testing"
)

// The families of gitleaks' default rule table (config/gitleaks.toml) that
// issue 36 found shown raw, each as gitleaks keeps them: true positives
// that must mask (generated at run time, so no key-shaped literal sits in
// the source) and false positives that must stay as written. The regexes
// and entropy thresholds the shapes follow are noted per family; the
// detectors are in gitleaks.go.

type leakFamily struct {
	name string // gitleaks rule id (or ours, for a family gitleaks lacks)
	tps  []func(g *shapeGen) sample
	fps  []string // must come back unchanged
}

// hiddenBody is a prefixed key whose body (but its last four) must not be shown.
func hiddenBody(prefix, body string) sample {
	return sample{prefix + body, []string{body[:len(body)/2], body[len(body)/2 : len(body)-4]}, ""}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var leakFamilies = []leakFamily{
	{"harness-api-key", []func(*shapeGen) sample{ // (?:pat|sat)\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}
		func(g *shapeGen) sample {
			return hiddenBody("pat.", cat(g.of(csWordDash, 22), ".", g.of(csAlnum, 24), ".", g.of(csAlnum, 20)))
		},
		func(g *shapeGen) sample {
			return hiddenBody("sat.", cat(g.of(csWordDash, 22), ".", g.of(csAlnum, 24), ".", g.of(csAlnum, 20)))
		},
	}, []string{"see pat.example.com/docs", "pat.a.b.c", "sat.config.yaml"}},
	{"new-relic", []func(*shapeGen) sample{ // NRAK-[a-z0-9]{27}, NRII-[a-z0-9-]{32}, NRJS-[a-f0-9]{19}
		func(g *shapeGen) sample { return hiddenBody("NRAK-", g.of(csUpper, 27)) },
		func(g *shapeGen) sample { return hiddenBody("NRII-", g.of(csLower+"-", 32)) },
		func(g *shapeGen) sample { return hiddenBody("NRJS-", g.of(csHex, 19)) },
		func(g *shapeGen) sample { // new-relic-user-api-id: 64 alphanumerics under a new relic name
			v := g.of(csAlnum, 64)
			return sample{cat("NEW_RELIC_USER_ID=", v), []string{v[:32], v[32:]}, ""}
		},
	}, []string{"NRJS-1234", "NRAK-short", "new_relic_app=checkout-service"}},
	{"mapbox", []func(*shapeGen) sample{ // secret (sk.) and temporary (tk.) tokens: base64url JSON, '.', 22
		func(g *shapeGen) sample {
			return hiddenBody("sk.", cat("eyJ1Ijoi", g.of(csWordDash, 52), ".", g.of(csWordDash, 22)))
		},
		func(g *shapeGen) sample {
			return hiddenBody("tk.", cat("eyJ1Ijoi", g.of(csWordDash, 70), ".", g.of(csWordDash, 22)))
		},
	}, []string{"sk.eyJ", "cat sk.example.json", "https://api.mapbox.com/styles/v1/mapbox/streets-v12"}},
	{"tailscale", []func(*shapeGen) sample{ // tskey-(auth|api|client|scim|webhook)-<id>CNTRL-<secret>
		func(g *shapeGen) sample {
			kind := []string{"auth", "api", "client", "scim", "webhook"}[g.r.IntN(5)]
			return hiddenBody("tskey-", cat(kind, "-", g.of(csAlnum, 11), "CNTRL-", g.of(csAlnum, 32)))
		},
	}, []string{"tskey-auth", "set TS_AUTHKEY to a tskey-auth-… key"}},
	{"nvidia", []func(*shapeGen) sample{ // nvapi-[\w-]{64}
		func(g *shapeGen) sample { return hiddenBody("nvapi-", g.of(csWordDash, 64)) },
	}, []string{"nvapi-docs", "the nvapi-python client"}},
	{"figma", []func(*shapeGen) sample{ // figd_[\w-]{40}
		func(g *shapeGen) sample { return hiddenBody("figd_", g.of(csWordDash, 40)) },
	}, []string{"figd_token", "figd_ prefix"}},
	{"contentful", []func(*shapeGen) sample{ // CFPAT-[\w-]{43}; delivery tokens: 43 under a contentful name
		func(g *shapeGen) sample { return hiddenBody("CFPAT-", g.of(csWordDash, 43)) },
		func(g *shapeGen) sample {
			v := g.of(csAlnum, 43)
			return sample{cat("contentful_delivery_api = \"", v, "\""), []string{v[:21], v[21:]}, ""}
		},
	}, []string{"CFPAT-short", "contentful_space = \"my-space\""}},
	{"doppler", []func(*shapeGen) sample{ // dp.pt.[a-z0-9]{43} and the other dp.<kind>. tokens
		func(g *shapeGen) sample { return hiddenBody("dp.pt.", g.of(csAlnum, 43)) },
		func(g *shapeGen) sample { return hiddenBody("dp.st.", cat("dev.", g.of(csAlnum, 40))) },
		func(g *shapeGen) sample { return hiddenBody("dp.st.", cat("prd_eu.", g.of(csAlnum, 40))) },
		func(g *shapeGen) sample { return hiddenBody("dp.sa.", g.of(csAlnum, 43)) },
	}, []string{"dp.st.dev", "see dp.pt.docs"}},
	{"supabase", []func(*shapeGen) sample{ // sbp_[a-f0-9]{40}, sbp_v0_…, sb_secret_…
		func(g *shapeGen) sample { return hiddenBody("sbp_", g.of(csHex, 40)) },
		func(g *shapeGen) sample { return hiddenBody("sbp_", cat("v0_", g.of(csHex, 40))) },
		func(g *shapeGen) sample { return hiddenBody("sb_secret_", g.of(csWordDash, 31)) },
	}, []string{"sbp_test", "sb_publishable_" + "x", "sb_secret_name"}},
	{"vercel", []func(*shapeGen) sample{ // vc[pciar k]_[A-Za-z0-9]{56}
		func(g *shapeGen) sample {
			return hiddenBody([]string{"vcp_", "vci_", "vca_", "vcr_", "vck_"}[g.r.IntN(5)], g.of(csAlnum, 56))
		},
	}, []string{"vcp_config", "vck_short"}},
	{"fireworks", []func(*shapeGen) sample{ // fw_[A-Za-z0-9]{24}
		func(g *shapeGen) sample { return hiddenBody("fw_", g.of(csAlnum, 24)) },
	}, []string{"fw_version", "fw_update_2024", "fw_" + "abc"}},
	{"airtable-personnal-access-token", []func(*shapeGen) sample{ // pat[[:alnum:]]{14}\.[a-f0-9]{64}
		func(g *shapeGen) sample { return hiddenBody("pat", cat(g.of(csAlnum, 14), ".", g.of(csHex, 64))) },
	}, []string{"pattern.txt", "path.Join"}},
	{"discord-bot", []func(*shapeGen) sample{ // base64(id).[\w-]{6}.[\w-]{27,38}
		func(g *shapeGen) sample {
			id := base64.RawURLEncoding.EncodeToString([]byte(cat("1", g.of(csDigits, 16+g.r.IntN(4)))))
			tail := g.of(csWordDash, []int{27, 38}[g.r.IntN(2)])
			return whole(cat(id, ".", g.of(csWordDash, 6), ".", tail), tail)
		},
		func(g *shapeGen) sample { // as a bot writes it in a header line
			id := base64.RawURLEncoding.EncodeToString([]byte(cat("1", g.of(csDigits, 18))))
			tail := g.of(csWordDash, 38)
			return sample{cat("Bot ", id, ".", g.of(csWordDash, 6), ".", tail), []string{id, tail}, ""}
		},
	}, []string{"docs.discord.com/developers/docs/topics/oauth2", "a.b.c"}},
	{"generic-basic", []func(*shapeGen) sample{ // Basic base64(user:pass) under a neutral name
		func(g *shapeGen) sample {
			v := b64(cat(g.of(csLower, 6), ":", g.of(csAlnum, 12)))
			return sample{cat(`"header": "Basic `, v, `"`), []string{v}, ""}
		},
		func(g *shapeGen) sample {
			v := b64(cat("admin:", g.of(csAlnum, 10)))
			return sample{cat("value=Basic ", v), []string{v}, ""}
		},
	}, []string{"Basic authentication failed", "use Basic auth", "Basic dGVzdA== is not a pair"}},
	{"generic-bearer", []func(*shapeGen) sample{ // Bearer [\w=~@.+/-]{8,} with entropy ≥ 2.75
		func(g *shapeGen) sample {
			v := g.of(csWordDash, 32)
			return sample{cat(`"h": "Bearer `, v, `"`), []string{v[:16], v[16:]}, ""}
		},
		func(g *shapeGen) sample {
			v := g.of(csAlnum, 20)
			return sample{cat("set header=Bearer ", v, " and retry"), []string{v[:10], v[10:]}, ""}
		},
	}, []string{"Bearer token required", "Bearer authentication", "Bearer xxxxxxxxxxxx"}},
	{"oauth-code", []func(*shapeGen) sample{ // code= in an OAuth redirect or token request
		func(g *shapeGen) sample {
			v := g.of(csWordDash, 40)
			return sample{cat("https://app.example.com/callback?code=", v, "&state=af0ifjsldkj"), []string{v[:20], v[20:]}, ""}
		},
		func(g *shapeGen) sample {
			v := cat("4/0A", g.of(csWordDash, 60))
			return sample{cat("grant_type=authorization_code&code=", v), []string{v[4:34], v[34:]}, ""}
		},
	}, []string{"status code=404", "https://example.com/?code=US", "error code: 500", "zip code=90210"}},
}

// leakContexts place a secret where issue 36 found shapes shown raw: alone,
// in a sentence, as a JSON value, and in a deny reason returned to an agent.
var leakContexts = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return "got " + s + " here" },
	func(s string) string { return `{"note": "` + s + `"}` },
	func(s string) string { return "denied: do not paste " + s + " into a task" },
}

func TestGitleaksFamiliesMask(t *testing.T) {
	g := newShapeGen(36)
	for _, f := range leakFamilies {
		for i, tp := range f.tps {
			for range 4 {
				smp := tp(g)
				for _, ctx := range leakContexts {
					in := ctx(smp.secret)
					got := MaskString(in)
					for _, h := range smp.hidden {
						if strings.Contains(got, h) {
							t.Errorf("%s #%d: MaskString(%q)\n = %q shows %q", f.name, i, in, got, h)
							break
						}
					}
				}
			}
		}
		for _, fp := range f.fps {
			if got := MaskString(fp); got != fp {
				t.Errorf("%s: must not mask %q, got %q", f.name, fp, got)
			}
		}
	}
}

// TestMaskIdentifier: a secret-shaped task id or lease sub is masked; the ids
// the engine and agents really use stay as written.
func TestMaskIdentifier(t *testing.T) {
	g := newShapeGen(37)
	for _, f := range leakFamilies {
		smp := f.tps[0](g)
		id := smp.secret // a sub may hold spaces and quotes (issue 36, item 5)
		got := MaskIdentifier(id)
		for _, h := range smp.hidden {
			if strings.Contains(got, h) {
				t.Errorf("%s: MaskIdentifier(%q) = %q", f.name, id, got)
			}
		}
	}
	for _, sh := range secretShapes[:20] {
		smp := sh.make(g)
		if got := MaskIdentifier(smp.secret); got != smp.mask {
			t.Errorf("%s: MaskIdentifier(%v) = %q, want %q", sh.name, smp, got, smp.mask)
		}
	}
	for _, id := range []string{"01JD6Z4Y8K3M9N2P5Q7R8S0T1V", "3f2b8c1e-9d4a-4e6b-8f0c-2a1b3c4d5e6f",
		"claude-desktop", "task-20261128-0007", "agent@host", "x$(id)"} {
		if got := MaskIdentifier(id); got != id {
			t.Errorf("MaskIdentifier(%q) = %q, want it unchanged", id, got)
		}
	}
}

// TestAuthSchemeOffsetsAreTheTexts: a letter whose lower case is longer
// (İ) before a credential must neither panic nor shift the mask.
func TestAuthSchemeOffsetsAreTheTexts(t *testing.T) {
	v := b64("admin:" + "hunter2hunter2")
	in := strings.Repeat("İ", 40) + " value=Basic " + v
	if got, want := MaskString(in), strings.Repeat("İ", 40)+" value=Basic "+Fixed; got != want {
		t.Fatalf("MaskString(%q) = %q", in, got)
	}
}
