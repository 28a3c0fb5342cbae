package preview

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// Generators for every secret shape the masker recognises by value or by URL structure. Tests on any
// surface that shows masked text can draw from secretShapes and webhookShapes and assert that no hidden
// part of a sample appears in what they render. Secrets are built at run time, never written as literals,
// so no key-shaped string sits in the source for secret scanners to trip on.

// shapeGen is a deterministic source of secrets.
type shapeGen struct{ r *rand.Rand }

func newShapeGen(seed uint64) *shapeGen { return &shapeGen{rand.New(rand.NewPCG(seed, 0x5ec7e7))} }

// Character sets of key bodies.
const (
	csAlnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	csLower    = "abcdefghijklmnopqrstuvwxyz0123456789"
	csLetters  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	csUpper    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	csBase32   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	csHex      = "0123456789abcdef"
	csDigits   = "0123456789"
	csWord     = csAlnum + "_"
	csWordDash = csAlnum + "_-"
	csB64      = csAlnum + "+/"
)

func (g *shapeGen) of(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// sample is one generated secret: the text to place, the parts of it that must never be shown, and what
// MaskString turns the secret alone into (for URL shapes, MaskURL).
type sample struct {
	secret string
	hidden []string
	mask   string
}

// keyed is a prefixed key masked as prefix...last4: everything of the body but its last four is hidden.
func keyed(prefix, body string) sample {
	return sample{prefix + body, []string{body[:len(body)-4]}, apiKeyShape(prefix, body)}
}

// whole is a secret masked whole: all of it is hidden, and so are both halves of its random core, so that
// a mask that covered only part of it is caught too.
func whole(secret string, core string) sample {
	h := []string{secret}
	if len(core) >= 16 {
		h = append(h, core[:len(core)/2], core[len(core)/2:])
	} else if core != "" {
		h = append(h, core)
	}
	return sample{secret, h, Fixed}
}

// masked sets the expected mask of a sample whose mask is neither prefix...last4 nor the fixed mask.
func (s sample) masked(m string) sample { s.mask = m; return s }

type secretShape struct {
	name string
	make func(g *shapeGen) sample
}

func key(prefix, set string, n int) func(*shapeGen) sample {
	return func(g *shapeGen) sample { return keyed(prefix, g.of(set, n)) }
}

// secretShapes are recognisable by value wherever they appear: in a URL, a header, a JSON value, text.
var secretShapes = []secretShape{
	// AI providers
	{"anthropic", func(g *shapeGen) sample { return keyed(cat("sk-", "ant-"), cat("api03-", g.of(csWordDash, 93), "AA")) }},
	{"openai-project", func(g *shapeGen) sample {
		return keyed("sk-", cat("proj-", g.of(csWordDash, 74), "T3Blbk", "FJ", g.of(csWordDash, 74)))
	}},
	{"openai-legacy", func(g *shapeGen) sample {
		return keyed("sk-", cat(g.of(csAlnum, 20), "T3Blbk", "FJ", g.of(csAlnum, 20)))
	}},
	{"huggingface", key("hf_", csLetters, 34)},
	{"huggingface-org", key("api_org_", csLetters, 34)},
	{"groq", key("gsk_", csAlnum, 52)},
	{"xai", key("xai-", csAlnum, 80)},
	{"replicate", key("r8_", csAlnum, 37)},
	{"perplexity", key("pplx-", csAlnum, 48)},
	// Payment
	{"stripe-secret", func(g *shapeGen) sample { return keyed("sk_", cat("live_", g.of(csAlnum, 24+g.r.IntN(76)))) }},
	{"stripe-restricted", func(g *shapeGen) sample { return keyed("rk_", cat("test_", g.of(csAlnum, 24))) }},
	{"stripe-webhook", key("whsec_", csAlnum, 32)},
	{"square-access", key(cat("sq0", "atp-"), csWordDash, 22)},
	{"square-secret", key(cat("sq0", "csp-"), csWordDash, 43)},
	{"square-production", key("EAAA", csWordDash, 60)},
	{"braintree", func(g *shapeGen) sample {
		return keyed(cat("access_token", "$production$"), cat(g.of(csLower, 16), "$", g.of(csHex, 32)))
	}},
	{"shippo", key(cat("shippo_", "live_"), csHex, 40)},
	{"flutterwave", func(g *shapeGen) sample { return keyed(cat("FLWSECK", "_TEST-"), cat(g.of(csHex, 32), "-X")) }},
	{"easypost", key("EZAK", csAlnum, 54)},
	// Cloud
	{"aws-access-key-id", key("AKIA", csBase32, 16)},
	{"aws-temporary-key-id", key("ASIA", csBase32, 16)},
	{"aws-key-pair", func(g *shapeGen) sample {
		id, secret := g.of(csBase32, 16), g.of(csB64, 38)+"Ab" // mixed case, as every real one is
		return sample{cat("AKIA", id, ":", secret), []string{secret[:20], secret[20:]}, cat("AKIA...", id[12:], ":", Fixed)}
	}},
	{"gcp-api-key", key("AIza", csWordDash, 35)},
	{"google-oauth-access", func(g *shapeGen) sample { return keyed("ya29.", cat("a0", g.of(csWordDash, 150))) }},
	{"google-oauth-client-secret", key("GOCSPX-", csWordDash, 28)},
	{"google-oauth-refresh", key("1//0", csWordDash, 100)},
	{"alibaba", key("LTAI", csAlnum, 20)},
	{"digitalocean", key(cat("dop_", "v1_"), csHex, 64)},
	{"heroku", key(cat("HRKU", "-AA"), csWordDash, 58)},
	{"vault", key("hvs.", csWordDash, 91)},
	{"doppler", key("dp.pt.", csAlnum, 43)},
	{"databricks", key("dapi", csHex, 32)},
	{"pulumi", key("pul-", csHex, 40)},
	{"planetscale", key(cat("pscale", "_tkn_"), csWord, 43)},
	{"flyio", key("fo1_", csWordDash, 43)},
	{"age", key(cat("AGE-SECRET", "-KEY-1"), csUpper, 58)},
	{"1password", func(g *shapeGen) sample { return keyed("ops_", cat("eyJ", g.of(csB64, 260))) }},
	{"openshift", key("sha256~", csWordDash, 43)},
	{"artifactory", key("AKCp", csAlnum, 69)},
	{"dynatrace", func(g *shapeGen) sample { return keyed("dt0c01.", cat(g.of(csUpper, 24), ".", g.of(csUpper, 64))) }},
	{"newrelic", key("NRAK-", csUpper, 27)},
	{"grafana-cloud", key("glc_", csB64, 80)},
	{"grafana-service-account", func(g *shapeGen) sample { return keyed("glsa_", cat(g.of(csAlnum, 32), "_", g.of(csHex, 8))) }},
	{"sentry", key("sntryu_", csHex, 64)},
	{"postman", func(g *shapeGen) sample { return keyed("PMAK-", cat(g.of(csHex, 24), "-", g.of(csHex, 34))) }},
	{"prefect", key("pnu_", csAlnum, 36)},
	{"readme", key("rdme_", csLower, 70)},
	{"linear", key(cat("lin", "_api_"), csAlnum, 40)},
	{"notion", func(g *shapeGen) sample { return keyed("ntn_", cat(g.of(csDigits, 11), g.of(csAlnum, 35))) }},
	{"grafana-api-key", func(g *shapeGen) sample { return keyed("eyJrIjoi", g.of(csAlnum, 80)) }},
	{"cloudflare-origin-ca", func(g *shapeGen) sample { return keyed("v1.0-", cat(g.of(csHex, 24), "-", g.of(csHex, 146))) }},
	{"1password-secret-key", func(g *shapeGen) sample {
		return keyed("A3-", cat(g.of(csUpper, 6), "-", g.of(csUpper, 11), "-", g.of(csUpper, 5), "-", g.of(csUpper, 5), "-", g.of(csUpper, 5)))
	}},
	{"octopus", key("API-", csUpper, 26)},
	{"sourcegraph", key("sgp_", csHex, 40)},
	{"typeform", key("tfp_", csWordDash, 59)},
	{"dropbox-short-lived", key("sl.", csWordDash, 135)},
	{"duffel", key(cat("duffel", "_live_"), csWordDash, 43)},
	// Source hosts
	{"github-classic", func(g *shapeGen) sample {
		return keyed(cat("gh", string("pousr"[g.r.IntN(5)]), "_"), g.of(csAlnum, 36))
	}},
	{"github-fine-grained", func(g *shapeGen) sample {
		return keyed(cat("github", "_pat_"), cat("11", g.of(csUpper, 20), "_", g.of(csAlnum, 59)))
	}},
	{"gitlab-pat", key(cat("gl", "pat-"), csWordDash, 20)},
	{"gitlab-pat-routable", func(g *shapeGen) sample {
		return keyed(cat("gl", "pat-"), cat(g.of(csWordDash, 27), ".01", g.of(csLower, 7)))
	}},
	{"gitlab-deploy", key(cat("gl", "dt-"), csWordDash, 20)},
	{"gitlab-runner", key(cat("gl", "rt-"), csWordDash, 20)},
	{"gitlab-trigger", key(cat("gl", "ptt-"), csHex, 40)},
	{"gitlab-job", func(g *shapeGen) sample {
		return keyed(cat("gl", "cbt-"), cat(g.of(csAlnum, 3), "_", g.of(csWordDash, 20)))
	}},
	{"gitlab-oauth", key(cat("gl", "oas-"), csWordDash, 64)},
	{"gitlab-agent", key(cat("gl", "agent-"), csWordDash, 50)},
	{"gitlab-runner-registration", key(cat("GR13", "48941"), csWordDash, 20)},
	{"atlassian", key(cat("ATATT", "3"), csWordDash, 186)},
	{"bitbucket-app-password", key("ATBB", csAlnum, 32)},
	// Chat
	{"slack-bot", func(g *shapeGen) sample {
		return keyed(cat("xo", "xb-"), cat(g.of(csDigits, 12), "-", g.of(csDigits, 13), "-", g.of(csAlnum, 24)))
	}},
	{"slack-user", func(g *shapeGen) sample {
		return keyed(cat("xo", "xp-"), cat(g.of(csDigits, 12), "-", g.of(csDigits, 12), "-", g.of(csDigits, 13), "-", g.of(csHex, 32)))
	}},
	{"slack-app", func(g *shapeGen) sample {
		return keyed(cat("xa", "pp-"), cat("1-", g.of(csUpper, 11), "-", g.of(csDigits, 13), "-", g.of(csHex, 64)))
	}},
	{"slack-config", func(g *shapeGen) sample { return keyed(cat("xoxe.", "xoxp-"), cat("1-", g.of(csUpper, 163))) }},
	{"telegram-bot", func(g *shapeGen) sample {
		id, tok := g.of(csDigits, 9+g.r.IntN(2)), cat("AA", g.of(csWordDash, 33))
		return whole(id+":"+tok, tok)
	}},
	{"discord-bot", func(g *shapeGen) sample {
		id := base64.RawURLEncoding.EncodeToString([]byte(cat("1", g.of(csDigits, 17))))
		tail := g.of(csWordDash, 38)
		return whole(cat(id, ".", g.of(csWordDash, 6), ".", tail), tail)
	}},
	// Mail and messaging
	{"sendgrid", func(g *shapeGen) sample { return keyed("SG.", cat(g.of(csWordDash, 22), ".", g.of(csWordDash, 43))) }},
	{"mailgun", key("key-", csHex, 32)},
	{"mailchimp", func(g *shapeGen) sample { h := g.of(csHex, 32); return whole(cat(h, "-us", g.of(csDigits, 2)), h) }},
	{"brevo", func(g *shapeGen) sample {
		return keyed(cat("xkey", "sib-"), cat(g.of(csHex, 64), "-", g.of(csAlnum, 16)))
	}},
	{"twilio-api-key", key("SK", csHex, 32)},
	// Identity
	{"entra-client-secret", func(g *shapeGen) sample {
		s := cat(g.of(csAlnum, 3), g.of(csDigits, 1), "Q~", g.of(csAlnum+"_~-", 33), "x")
		return whole(s, s[6:])
	}},
	// Package registries
	{"npm", key("npm_", csAlnum, 36)},
	{"pypi", func(g *shapeGen) sample { return keyed("pypi-", cat("AgEIcHlwaS5vcmc", g.of(csWordDash, 70))) }},
	{"rubygems", key(cat("rubygems", "_"), csHex, 48)},
	{"nuget", key("oy2", csLower, 43)},
	{"docker-hub", key(cat("dckr", "_pat_"), csWordDash, 27)},
	{"clojars", key("CLOJARS_", csAlnum, 60)},
	// Commerce
	{"shopify", func(g *shapeGen) sample {
		return keyed(cat("shp", []string{"at", "ca", "pa", "ss"}[g.r.IntN(4)], "_"), g.of(csHex, 32))
	}},
	// Formats
	{"jwt", func(g *shapeGen) sample {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": g.of(csAlnum, 10), "jti": g.of(csAlnum, 16)})
		s, err := tok.SignedString([]byte(g.of(csAlnum, 32)))
		if err != nil {
			panic(err)
		}
		return keyed("eyJ", s[3:])
	}},
	{"pem", func(g *shapeGen) sample {
		body := g.of(csB64, 64)
		head, tail := cat("-----BEGIN RSA ", "PRIVATE KEY-----"), cat("-----END RSA ", "PRIVATE KEY-----")
		s := cat(head, "\n", body, "\n", g.of(csB64, 40), "\n", tail)
		return sample{s, []string{body}, head + Fixed + tail}
	}},
	// Base64 of a known shape: a Basic credential and a bare token.
	{"base64-basic", func(g *shapeGen) sample {
		tok := g.of(csAlnum, 36)
		enc := base64.StdEncoding.EncodeToString([]byte(cat("bot:", "ghp_", tok)))
		return whole(enc, enc)
	}},
	{"base64-token", func(g *shapeGen) sample {
		enc := base64.URLEncoding.EncodeToString([]byte(cat("xo", "xb-", g.of(csDigits, 12), "-", g.of(csAlnum, 24))))
		return whole(enc, enc)
	}},
}

// webhookShapes are whole URLs whose path or parameters are the secret.
var webhookShapes = []secretShape{
	{"slack-webhook", func(g *shapeGen) sample {
		tok := g.of(csAlnum, 24)
		return whole(cat("https://hooks.", "slack.com/services/T", g.of(csUpper, 8), "/B", g.of(csUpper, 10), "/", tok), tok).
			masked("https://hooks.slack.com/services/" + Fixed + "/" + Fixed + "/" + Fixed)
	}},
	{"slack-workflow", func(g *shapeGen) sample {
		tok := g.of(csAlnum, 24)
		return whole(cat("https://hooks.", "slack.com/workflows/T", g.of(csUpper, 8), "/A", g.of(csUpper, 10), "/", g.of(csDigits, 18), "/", tok), tok).
			masked("https://hooks.slack.com/workflows/" + strings.Repeat(Fixed+"/", 3) + Fixed)
	}},
	{"discord-webhook", func(g *shapeGen) sample {
		tok := g.of(csWordDash, 68)
		host := []string{"discord.com", "discordapp.com", "ptb.discord.com"}[g.r.IntN(3)]
		id := g.of(csDigits, 18)
		return whole(cat("https://", host, "/api/webhooks/", id, "/", tok), tok).masked("https://" + host + "/api/webhooks/" + id + "/" + Fixed)
	}},
	{"teams-webhook", func(g *shapeGen) sample {
		guid := func() string {
			return cat(g.of(csHex, 8), "-", g.of(csHex, 4), "-", g.of(csHex, 4), "-", g.of(csHex, 4), "-", g.of(csHex, 12))
		}
		a, b, c, d := guid(), guid(), g.of(csHex, 32), guid()
		u := cat("https://contoso.", "webhook.office.com/webhookb2/", a, "@", b, "/IncomingWebhook/", c, "/", d)
		return sample{u, []string{a, b, c, d}, "https://contoso.webhook.office.com/webhookb2/" + Fixed + "/IncomingWebhook/" + Fixed + "/" + Fixed}
	}},
	{"telegram-bot-path", func(g *shapeGen) sample {
		tok := cat(g.of(csDigits, 10), ":", "AA", g.of(csWordDash, 33))
		chat := g.of(csDigits, 9)
		return whole(cat("https://api.", "telegram.org/bot", tok, "/sendMessage?chat_id=", chat), tok).
			masked("https://api.telegram.org/bot" + Fixed + "/sendMessage?chat_id=" + chat)
	}},
	{"zapier-hook", func(g *shapeGen) sample {
		k := g.of(csLower, 6) + g.of(csDigits, 1)
		n := g.of(csDigits, 7)
		return whole(cat("https://hooks.", "zapier.com/hooks/catch/", n, "/", k, "/"), k).masked("https://hooks.zapier.com/hooks/catch/" + n + "/" + Fixed + "/")
	}},
	{"ifttt-key", func(g *shapeGen) sample {
		k := g.of(csWordDash, 22)
		return whole(cat("https://maker.", "ifttt.com/trigger/lights_on/with/key/", k), k).masked("https://maker.ifttt.com/trigger/lights_on/with/key/" + Fixed)
	}},
	{"home-assistant-webhook", func(g *shapeGen) sample {
		id := g.of(csHex, 64)
		return whole(cat("http://homeassistant.local:8123/api/webhook/", id), id).masked("http://homeassistant.local:8123/api/webhook/" + Fixed)
	}},
	{"mattermost-hook", func(g *shapeGen) sample {
		id := g.of(csLower, 24) + "1a"
		return whole(cat("https://chat.example.org/hooks/", id), id).masked("https://chat.example.org/hooks/" + Fixed)
	}},
	{"azure-sas", func(g *shapeGen) sample {
		sig := g.of(csB64, 43) + "="
		u := cat("https://acct.blob.core.windows.net/media/clip.mp4?sv=2022-11-02&ss=b&srt=o&sp=r",
			"&se=2026-12-01T00:00:00Z&st=2026-11-01T00:00:00Z&spr=https&sig=", strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(sig))
		return sample{u, []string{sig, sig[:20]}, u[:strings.Index(u, "&sig=")] + "&sig=" + Fixed}
	}},
	{"s3-presigned", func(g *shapeGen) sample {
		id, sig, tok := cat("ASIA", g.of(csBase32, 16)), g.of(csHex, 64), g.of(csAlnum, 120)
		u := cat("https://bucket.s3.amazonaws.com/media/clip.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=", id,
			"%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T000000Z&X-Amz-Expires=3600",
			"&X-Amz-Security-Token=", tok, "&X-Amz-SignedHeaders=host&X-Amz-Signature=", sig)
		m := strings.NewReplacer(id+"%2F20261126%2Fus-east-1%2Fs3%2Faws4_request", Fixed, tok, Fixed, sig, Fixed).Replace(u)
		return sample{u, []string{id[4:], sig, tok[:60], tok[60:]}, m}
	}},
	{"gcs-signed", func(g *shapeGen) sample {
		sig := g.of(csHex, 512)
		u := cat("https://storage.googleapis.com/bucket/clip.mp4?X-Goog-Algorithm=GOOG4-RSA-SHA256",
			"&X-Goog-Credential=svc%40proj.iam.gserviceaccount.com%2F20261126%2Fauto%2Fstorage%2Fgoog4_request",
			"&X-Goog-Date=20261126T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=", sig)
		m := strings.NewReplacer("svc%40proj.iam.gserviceaccount.com%2F20261126%2Fauto%2Fstorage%2Fgoog4_request", Fixed, sig, Fixed).Replace(u)
		return sample{u, []string{sig[:64], sig[64:200]}, m}
	}},
	{"cloudfront-signed", func(g *shapeGen) sample {
		sig := g.of(csAlnum+"-_~", 172)
		u := cat("https://d111111abcdef8.cloudfront.net/clip.mp4?Expires=1795000000&Signature=", sig, "&Key-Pair-Id=K2JCJMDEHXQW5F")
		return sample{u, []string{sig[:86], sig[86:]}, strings.Replace(u, sig, Fixed, 1)}
	}},
	{"jsessionid-path", func(g *shapeGen) sample {
		id := g.of("0123456789ABCDEF", 32)
		return whole(cat("https://shop.example.com/cart;jsessionid=", id, "?step=2"), id).masked("https://shop.example.com/cart;jsessionid=" + Fixed + "?step=2")
	}},
	{"phpsessid-path", func(g *shapeGen) sample {
		id := g.of(csLower, 26)
		return whole(cat("https://forum.example.com/index.php;PHPSESSID=", id), id).masked("https://forum.example.com/index.php;PHPSESSID=" + Fixed)
	}},
}

// String names a sample in failure messages without printing it twice.
func (s sample) String() string { return fmt.Sprintf("%.60q…", s.secret) }
