package preview

import "strings"

// This file holds the prefixed key shapes: tokens whose vendor prefix makes them recognisable by value
// alone, wherever they appear. The list follows the rule set of gitleaks' default configuration (cloud
// providers, source hosts, chat, payment, AI providers, package registries, observability) and keeps the
// shapes that can reach a URL, a header or a JSON value. Keys without a prefix (Cohere, Heroku's UUID
// keys, Azure storage keys) are masked by the name of their field instead; see names.go.

// vendor is one key shape: a literal prefix, then a run of body characters at least min long. Matching is by
// hand rather than by regexp: counted repetitions make regexp programs large and slow, and one table reads
// better than a hundred expressions. The whole run of body characters is taken, even past a vendor's
// nominal length, so that nothing of a key glued to other text is left showing.
type vendor struct {
	prefixes []string
	body     func(c byte) bool
	min      int
	show     int // prefix bytes shown in the mask (Stripe shows "sk_" of "sk_live_"); 0 shows the whole prefix
}

func alnumUnder(c byte) bool     { return isAlnum(c) || c == '_' }
func alnumDash(c byte) bool      { return isAlnum(c) || c == '-' }
func alnumUnderDash(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }
func wordDashDot(c byte) bool    { return alnumUnderDash(c) || c == '.' }
func base32Upper(c byte) bool    { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' }
func upperAlnum(c byte) bool     { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
func upperAlnumDash(c byte) bool { return upperAlnum(c) || c == '-' }
func lowerAlnum(c byte) bool     { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isHex(c byte) bool          { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func hexDash(c byte) bool        { return isHex(c) || c == '-' }
func alnumDollar(c byte) bool    { return isAlnum(c) || c == '$' }
func b64Std(c byte) bool         { return isAlnum(c) || c == '+' || c == '/' || c == '=' }
func b64Any(c byte) bool         { return b64Std(c) || c == '_' || c == '-' }
func sendgridBody(c byte) bool   { return wordDashDot(c) || c == '=' }
func azureSecretBody(c byte) bool {
	return isAlnum(c) || c == '_' || c == '~' || c == '.' || c == '-'
}

func withEach(prefix, set, suffix string) []string {
	out := make([]string, len(set))
	for i := range set {
		out[i] = prefix + set[i:i+1] + suffix
	}
	return out
}

func pre(p ...string) []string { return p }

// awsPrefixes start AWS access key ids (user, temporary, and the A3T… of older keys).
var awsPrefixes = append(pre("AKIA", "ASIA", "ABIA", "ACCA"), withEach("A3T", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "")...)

// vendors, most specific first: at one position the first that matches wins (Anthropic before OpenAI).
// Minimum lengths sit a little under the real ones, so that a truncated or re-formatted key still masks,
// while ordinary identifiers that share a prefix ("sk-learn", "key-value", "hf_hub") stay readable.
var vendors = []vendor{
	// AI providers. OpenAI's sk-proj-, sk-svcacct-, sk-admin- and OpenRouter's sk-or-v1- all start "sk-".
	{pre("sk-ant-"), alnumUnderDash, 20, 0},
	{pre("sk-"), alnumUnderDash, 20, 0},
	{pre("hf_", "api_org_"), isAlnum, 30, 0}, // Hugging Face user and organisation tokens
	{pre("gsk_"), isAlnum, 40, 0},            // Groq
	{pre("xai-"), isAlnum, 60, 0},            // xAI
	{pre("r8_"), isAlnum, 30, 0},             // Replicate
	{pre("pplx-"), isAlnum, 40, 0},           // Perplexity

	// Payment. Stripe's publishable pk_ keys are public by design and stay readable.
	{pre("sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_"), isAlnum, 10, 3},
	{pre("whsec_"), isAlnum, 24, 0},                                                // Stripe webhook signing secret
	{pre("sq0atp-", "sq0csp-"), alnumUnderDash, 22, 0},                             // Square
	{pre("EAAA"), alnumUnderDash, 40, 0},                                           // Square production tokens
	{pre("EAAC", "EAAM"), isAlnum, 60, 0},                                          // Facebook page tokens
	{pre("access_token$production$", "access_token$sandbox$"), alnumDollar, 40, 0}, // Braintree / PayPal
	{pre("shippo_live_", "shippo_test_"), isHex, 40, 0},
	{pre("FLWSECK_TEST-", "FLWSECK-"), alnumDash, 12, 0}, // Flutterwave
	{pre("EZAK", "EZTK"), isAlnum, 54, 0},                // EasyPost

	// Cloud providers.
	{awsPrefixes, base32Upper, 16, 0},       // AWS access key ids; the secret next to one is found in special.go
	{pre("AIza"), alnumUnderDash, 35, 0},    // Google API keys
	{pre("ya29."), wordDashDot, 30, 0},      // Google OAuth access tokens
	{pre("GOCSPX-"), alnumUnderDash, 24, 0}, // Google OAuth client secrets
	{pre("1//0"), alnumUnderDash, 40, 0},    // Google OAuth refresh tokens
	{pre("LTAI"), isAlnum, 20, 0},           // Alibaba Cloud access key ids
	{pre("dop_v1_", "doo_v1_", "dor_v1_"), isHex, 64, 0},
	{pre("HRKU-AA"), alnumUnderDash, 58, 0},              // Heroku
	{pre("hvs.", "hvb.", "hvr."), alnumUnderDash, 24, 0}, // HashiCorp Vault
	// Doppler; a service token names its config first ("dp.st.prd_eu.<40>").
	{pre("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."), wordDashDot, 40, 0},
	{pre("dapi"), isHex, 32, 0}, // Databricks
	{pre("pul-"), isHex, 40, 0}, // Pulumi
	{pre("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), wordDashDot, 32, 0},
	{pre("fo1_"), alnumUnderDash, 40, 0},            // Fly.io
	{pre("fm1r_", "fm1a_", "fm2_"), b64Std, 100, 0}, // Fly.io macaroons
	{pre("tk-us-"), alnumUnderDash, 48, 0},          // Scalingo
	{pre("AGE-SECRET-KEY-1"), upperAlnum, 58, 0},    // age
	{pre("ops_eyJ"), b64Std, 250, 4},                // 1Password service accounts
	{pre("sha256~"), alnumUnderDash, 43, 0},         // OpenShift user tokens
	{pre("AKCp"), isAlnum, 60, 0},                   // Artifactory
	{pre("dt0c01."), wordDashDot, 80, 0},            // Dynatrace
	{pre("NRAK-", "NRII-"), alnumDash, 27, 0},       // New Relic user and insert keys
	{pre("NRJS-"), isHex, 16, 0},                    // New Relic browser ingest tokens
	{pre("glc_"), b64Std, 32, 0},                    // Grafana Cloud
	{pre("glsa_"), alnumUnder, 40, 0},               // Grafana service accounts
	{pre("sntryu_"), isHex, 64, 0},                  // Sentry user tokens
	{pre("sntrys_"), b64Any, 60, 0},                 // Sentry org tokens
	{pre("PMAK-"), hexDash, 58, 0},                  // Postman
	{pre("pnu_"), isAlnum, 36, 0},                   // Prefect
	{pre("rdme_"), isAlnum, 70, 0},                  // ReadMe
	{pre("lin_api_"), isAlnum, 40, 0},               // Linear
	{pre("ntn_"), isAlnum, 46, 0},                   // Notion
	{pre("secret_"), isAlnum, 43, 0},                // Notion (older integrations)
	{pre("eyJrIjoi"), b64Std, 70, 0},                // Grafana API keys (base64 JSON, not a JWT)
	{pre("v1.0-"), hexDash, 170, 0},                 // Cloudflare Origin CA keys
	{pre("cmVmd"), isAlnum, 59, 0},                  // Artifactory reference tokens
	{pre("p8e-"), isAlnum, 32, 0},                   // Adobe client secrets
	{pre("A3-"), upperAlnumDash, 30, 0},             // 1Password account secret keys
	{pre("API-"), upperAlnum, 26, 0},                // Octopus Deploy
	{pre("s-s4t2ud-", "s-s4t2af-"), isHex, 64, 0},   // 42 Intra
	{pre("duffel_test_", "duffel_live_"), wordDashDot, 43, 0},
	{pre("fio-u-"), alnumUnderDash, 64, 0},                        // Frame.io
	{pre("ico-"), isAlnum, 32, 0},                                 // Infracost
	{pre("sgp_"), alnumUnder, 40, 0},                              // Sourcegraph
	{pre("tfp_"), wordDashDot, 59, 0},                             // Typeform
	{pre("dnkey-"), alnumUnderDash, 70, 0},                        // Defined Networking
	{pre("sm_pat_", "sm_aat_", "sm_sat_"), isAlnum, 16, 0},        // SettleMint
	{pre("sl."), alnumUnderDash, 130, 0},                          // Dropbox short-lived tokens
	{pre("sk.eyJ", "tk.eyJ"), wordDashDot, 60, 3},                 // Mapbox secret and temporary tokens (pk. is public)
	{pre("tskey-"), alnumDash, 40, 0},                             // Tailscale auth, API, client, SCIM and webhook keys
	{pre("nvapi-"), alnumUnderDash, 60, 0},                        // NVIDIA
	{pre("figd_"), alnumUnderDash, 36, 0},                         // Figma personal access tokens
	{pre("CFPAT-"), alnumUnderDash, 40, 0},                        // Contentful personal access tokens
	{pre("sbp_"), alnumUnder, 40, 0},                              // Supabase access tokens (also sbp_v0_)
	{pre("sb_secret_"), alnumUnderDash, 28, 0},                    // Supabase secret API keys
	{pre("vcp_", "vci_", "vca_", "vcr_", "vck_"), isAlnum, 50, 0}, // Vercel
	{pre("fw_"), isAlnum, 20, 0},                                  // Fireworks AI

	// Source hosts and CI.
	{pre("github_pat_"), alnumUnder, 40, 0}, // fine-grained: 22 + "_" + 59 in practice
	{withEach("gh", "pousr", "_"), isAlnum, 36, 0},
	{pre("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-", "glagent-", "glffct-"),
		wordDashDot, 20, 0}, // routable tokens end in ".<version><crc>"
	{pre("GR1348941"), alnumUnderDash, 20, 0},         // GitLab runner registration
	{pre("ATATT3", "ATCTT3"), alnumUnderDash, 100, 0}, // Atlassian / Bitbucket API and access tokens
	{pre("ATBB"), isAlnum, 28, 0},                     // Bitbucket app passwords

	// Chat. Webhook URLs, whose path is the secret, are in paths.go.
	{pre("xoxe.xoxb-", "xoxe.xoxp-"), alnumDash, 10, 0},
	{withEach("xox", "abposer", "-"), alnumDash, 10, 0},
	{pre("xapp-"), alnumDash, 10, 0},

	// Mail and messaging.
	{pre("SG."), sendgridBody, 60, 0},   // SendGrid
	{pre("key-"), isHex, 32, 0},         // Mailgun
	{pre("xkeysib-"), alnumDash, 64, 0}, // Brevo (Sendinblue)
	{pre("SK"), isHex, 32, 0},           // Twilio API key SIDs (the account SID "AC…" is an id)

	// Package registries.
	{pre("npm_"), isAlnum, 36, 0},
	{pre("pypi-AgEIcHlwaS5vcmc"), alnumUnderDash, 50, 5},
	{pre("rubygems_"), isHex, 48, 0},
	{pre("oy2"), lowerAlnum, 43, 0}, // NuGet
	{pre("dckr_pat_", "dckr_oat_"), alnumUnderDash, 27, 0},
	{pre("CLOJARS_"), isAlnum, 60, 0},

	// Commerce.
	{pre("shpat_", "shpca_", "shppa_", "shpss_"), isHex, 32, 0}, // Shopify
}

// vendorPrefix is one prefix of one vendor, indexed by its first byte.
type vendorPrefix struct {
	prefix string
	v      *vendor
}

// vendorIndex lists, for every first byte, the prefixes that start with it in table order, so a position
// is rejected with one lookup and accepted after trying only its own few prefixes.
var vendorIndex = func() (t [256][]vendorPrefix) {
	for i := range vendors {
		for _, p := range vendors[i].prefixes {
			t[p[0]] = append(t[p[0]], vendorPrefix{p, &vendors[i]})
		}
	}
	return t
}()

// vendorAt matches a vendor key starting exactly at s[0]; it returns the key's length (0 when none
// matches) and the part of the prefix the mask shows.
func vendorAt(s string) (int, string) {
	if s == "" {
		return 0, ""
	}
	for _, vp := range vendorIndex[s[0]] {
		if len(s) < len(vp.prefix) || s[1] != vp.prefix[1] || !strings.HasPrefix(s, vp.prefix) {
			continue
		}
		n := len(vp.prefix)
		for n < len(s) && vp.v.body(s[n]) {
			n++
		}
		// A sentence may end right after a key whose body allows dots.
		for n > len(vp.prefix) && s[n-1] == '.' {
			n--
		}
		if n-len(vp.prefix) >= vp.v.min {
			shown := vp.prefix
			if vp.v.show > 0 {
				shown = vp.prefix[:vp.v.show]
			}
			return n, shown
		}
	}
	return 0, ""
}

// vendorKey returns the masked shape of s when all of s is one recognised vendor key or JWT.
func vendorKey(s string) (string, bool) {
	if loc := jwtRE.FindStringIndex(s); loc != nil && loc[0] == 0 && loc[1] == len(s) {
		return apiKeyShape("eyJ", s), true
	}
	if n, shown := vendorAt(s); n > 0 && n == len(s) {
		return apiKeyShape(shown, s), true
	}
	return "", false
}

// apiKeyShape is the spec's API key shape: recognisable prefix, "...", last four.
func apiKeyShape(prefix, key string) string {
	return prefix + "..." + key[len(key)-4:]
}
