package preview

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestEveryShapeMasks is the must-mask table of every shape in secretShapes and webhookShapes: each
// generated secret, alone and inside a sentence, masks to exactly its expected shape (prefix...last4 for a
// key with a vendor prefix, the fixed mask otherwise; for URLs, the URL with its secret parts masked).
func TestEveryShapeMasks(t *testing.T) {
	g := newShapeGen(7)
	for _, sh := range secretShapes {
		for range 3 {
			smp := sh.make(g)
			if got := MaskString(smp.secret); got != smp.mask {
				t.Errorf("%s: MaskString(%v)\n got %q\nwant %q", sh.name, smp, got, smp.mask)
			}
			if got, want := MaskString("got "+smp.secret+" here"), "got "+smp.mask+" here"; got != want {
				t.Errorf("%s in a sentence: MaskString(%v)\n got %q\nwant %q", sh.name, smp, got, want)
			}
		}
	}
	for _, sh := range webhookShapes {
		for range 3 {
			smp := sh.make(g)
			if got := MaskURL(smp.secret); got != smp.mask {
				t.Errorf("%s: MaskURL(%v)\n got %q\nwant %q", sh.name, smp, got, smp.mask)
			}
			if got, want := MaskString("POST "+smp.secret+" now"), "POST "+smp.mask+" now"; got != want {
				t.Errorf("%s in a sentence: MaskString(%v)\n got %q\nwant %q", sh.name, smp, got, want)
			}
		}
	}
}

// shapeRules are the hand-written must-mask / must-not-mask rows: exact outputs for representative keys,
// and the near misses each rule must leave alone (too short, glued to a word, a different alphabet).
func shapeRules() []ruleCase {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	ghp := cat("ghp_", rep("a", 32), "wxyz")
	awsID := cat("AKIA", "IOSFODNN7EXAMPLE")
	awsSecret := cat("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")
	return []ruleCase{
		{
			rule: "prefixed keys",
			mask: map[string]string{
				cat("hf_", rep("a", 30), "wxyz"):                                             "hf_...wxyz",
				cat("npm_", rep("A", 32), "wxyz"):                                            "npm_...wxyz",
				cat("pypi-", "AgEIcHlwaS5vcmc", rep("x", 46), "wxyz"):                        "pypi-...wxyz",
				cat("dckr_", "pat_", rep("x", 23), "wxyz"):                                   "dckr_pat_...wxyz",
				cat("shpat_", rep("0", 28), "abcd"):                                          "shpat_...abcd",
				cat("dop_", "v1_", rep("f", 60), "abcd"):                                     "dop_v1_...abcd",
				cat("hvs.", rep("C", 90), "wxyz"):                                            "hvs....wxyz",
				cat("SG.", rep("a", 22), ".", rep("b", 39), "wxyz"):                          "SG....wxyz",
				cat("SK", rep("0", 28), "abcd"):                                              "SK...abcd",
				cat("key-", rep("9", 28), "abcd"):                                            "key-...abcd",
				cat("EAAA", rep("Z", 56), "wxyz"):                                            "EAAA...wxyz",
				cat("ghr_", rep("r", 32), "wxyz"):                                            "ghr_...wxyz",
				cat("github_", "pat_", "11", rep("A", 20), "_", rep("b", 55), "wxyz"):        "github_pat_...wxyz",
				cat("glpat-", rep("a", 27), ".01", "abcdefg"):                                "glpat-...defg",
				cat("xoxe.", "xoxp-", "1-", rep("A", 159), "WXYZ"):                           "xoxe.xoxp-...WXYZ",
				cat("ya29.", "a0", rep("b", 96), "wxyz"):                                     "ya29....wxyz",
				cat("access_token", "$production$", rep("a", 16), "$", rep("0", 28), "abcd"): "access_token$production$...abcd",
				"key " + cat("AIza", "SyD", rep("x", 28), "wxyz") + ".":                      "key AIza...wxyz.",
			},
			keep: []string{"hf_hub_download", "sk-learn", "key-value store", "npm_config_cache", "SKU-12345",
				"secret_garden.mkv", "pypi-simple", "dckr_pat_short", "AIzaShort", "SG.example.com", "ratio 1//0",
				"xoxb-1", "oy2short", "glpat-short", "the ya29 bus", "EAAAAA", "dapi-docs", "A3-landscape", "API-docs",
				"ico-font", "sl.example.com", "v1.0-beta", "sgp_x", "p8e-short"},
		},
		{
			rule: "prefixless shapes",
			mask: map[string]string{
				// A commit id next to a key id is still a commit id.
				awsID + " at 9fceb02d0ae598e95dc970b74767f19372d61af8":                 "AKIA...MPLE at 9fceb02d0ae598e95dc970b74767f19372d61af8",
				awsID + " " + awsSecret:                                                "AKIA...MPLE " + Fixed,
				"id=" + awsID + ",secret=" + awsSecret:                                 "id=AKIA...MPLE,secret=" + Fixed,
				cat("bot 123456789:", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"):           "bot " + Fixed,
				cat("/bot123456789:", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "/getMe"): "/bot" + Fixed + "/getMe",
				cat("mc ", rep("0123456789abcdef", 2), "-us21 ok"):                     "mc " + Fixed + " ok",
				// Keys without a shape of their own are masked by the name they travel under.
				"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + b64(rep("\x01\xfe", 32)) + ";EndpointSuffix=core.windows.net": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + Fixed + ";EndpointSuffix=core.windows.net",
				"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc123=":                                   "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=" + Fixed,
				"HEROKU_API_KEY=01234567-89ab-cdef-0123-456789abcdef":                                                                         "HEROKU_API_KEY=" + Fixed,
				"CO_API_KEY=" + rep("c", 40):               "CO_API_KEY=" + Fixed,
				cat("cs=", "abc1Q~", rep("x", 30), "yz12"): "cs=" + Fixed,
				cat(base64.RawURLEncoding.EncodeToString([]byte("123456789012345678")), ".", "GhIjKl", ".", rep("t", 38)): Fixed,
			},
			keep: []string{
				"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY alone", // 40 base64 characters without an id are anything
				"12:30:45 2026-11-26T00:16:31Z ratio 123456:1", "Q~ and 1Q~x",
				rep("0123456789abcdef", 2) + "-usb", "version 1.2.3 of app.module.ts",
			},
		},
		{
			rule: "webhook and signed URLs",
			mask: map[string]string{
				"https://hooks.slack.com/services/T0/B0/" + rep("X", 24):                                               "https://hooks.slack.com/services/" + Fixed + "/" + Fixed + "/" + Fixed,
				"https://h/cart;jsessionid=" + rep("A", 32) + "?step=2":                                                "https://h/cart;jsessionid=" + Fixed + "?step=2",
				"https://h/a;JSESSIONID=abc123;other=1":                                                                "https://h/a;JSESSIONID=" + Fixed + ";other=1",
				"https://acct.blob.core.windows.net/c/b.mp4?sv=2022-11-02&se=2026-12-01&sp=r&sr=b&sig=abc%2Bdef%3D":    "https://acct.blob.core.windows.net/c/b.mp4?sv=2022-11-02&se=2026-12-01&sp=r&sr=b&sig=" + Fixed,
				"https://d1.cloudfront.net/v.mp4?Expires=1795000000&Signature=abc~def&Key-Pair-Id=K2JCJMDEHXQW5F":      "https://d1.cloudfront.net/v.mp4?Expires=1795000000&Signature=" + Fixed + "&Key-Pair-Id=K2JCJMDEHXQW5F",
				"https://b.s3.amazonaws.com/k?X-Amz-Date=20261126T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=ab": "https://b.s3.amazonaws.com/k?X-Amz-Date=20261126T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=" + Fixed,
				"https://b.oss-cn-hangzhou.aliyuncs.com/k?x-oss-signature=a&x-oss-credential=b&x-oss-date=1":           "https://b.oss-cn-hangzhou.aliyuncs.com/k?x-oss-signature=" + Fixed + "&x-oss-credential=" + Fixed + "&x-oss-date=1",
				"https://cdn.example/v.m3u8?hdnts=exp=1~acl=/*~hmac=ab12":                                              "https://cdn.example/v.m3u8?hdnts=" + Fixed,
				// Without a scheme, as webhook URLs are often pasted.
				"see hooks.slack.com/services/T0/B0/" + rep("X", 24) + ".": "see hooks.slack.com/services/" + Fixed + "/" + Fixed + "/" + Fixed + ".",
				"ha.local:8123/api/webhook/" + rep("0a", 32):               "ha.local:8123/api/webhook/" + Fixed,
			},
			keep: []string{
				"https://api.github.com/repos/o/r/hooks/123456789", // a REST hook id is not a secret
				"https://hooks.slack.com/", "https://discord.com/api/webhooks", "https://example.com/docs/webhooks/IncomingWebhook",
				"https://bucket.s3.amazonaws.com/media/clip.mp4", "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
				"https://cdn.example.com/media/2f1c9a7e4b5d6c8e0a1b2c3d4e5f6071.mp4",
				"https://h/a;type=audio/b;v=2", "https://h/api/services/media_player/play_media",
				"see example.com/docs/webhooks and media_player.tv/state", "a.b/c.d",
			},
		},
		{
			rule: "encoded secrets",
			mask: map[string]string{
				"auth blob " + b64("bot:"+ghp):        "auth blob " + Fixed,
				"cfg " + b64(`{"token":"x"}`) + " ok": "cfg " + Fixed + " ok",
				"log token%3Dabcdef123 end":           "log token=" + Fixed + " end",
				"key ghp%5F" + ghp[4:]:                "key ghp_...wxyz",
				"mail jane%40example.com":             "mail j***@example.com",
				"q=" + strings.NewReplacer(":", "%253A", "/", "%252F").Replace("https://u:pw@h/x"): "q=https://u:" + Fixed + "@h/x",
			},
			keep: []string{
				"hello " + b64("hello world this is fine"), "sha512-" + b64(rep("\xff\x01", 32)),
				"my%20song.mp3 100% done 50%OFF", "%zz%", "media_player_living_room_tv and media_player.living_room",
				"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			},
		},
		{
			rule: "ordinary errors, ids and media",
			keep: []string{
				"dial unix /etc/passwd: connect: connection refused",
				"open /etc/passwd: no such file or directory",
				"open /run/secrets/api_key: permission denied",
				`open C:\secrets\token: access is denied`,
				"read /home/u/.ssh/id_rsa: permission denied",
				"lookup token.example.com: no such host",
				`Get "https://ha.local:8123/api/states": dial tcp 10.0.0.1:8123: connect: connection refused`,
				"token has invalid claims: token is expired",
				"failed to decode key: illegal base64 data at input byte 4",
				"secret: not found", "api_key: missing", "token: expired.",
				"token signature is invalid: signature is invalid",
				"x509: certificate signed by unknown authority",
				"context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
				"task 3f2a1b4c-0d9e-4f8a-b7c6-1e2d3c4b5a69 done at commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
				"preview sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				// Media ids and references the previews carry all the time.
				"https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
				"spotify:track:4uLU6hMCjMI75M1A2tKUQC",
				"media-source://media_source/local/Movies/Big Buck Bunny (2008).mkv",
				"https://i.scdn.co/image/ab67616d0000b273e8b066f70c206551210d902b",
				"magnet:?xt=urn:btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a&dn=file.mkv",
				`ETag: "33a64df551425fcc55e4d42a148795d9f25f89d4"`,
				"x-request-id: 7f3e2b1c-9d4a-4e8b-a6f5-0c1d2e3f4a5b",
				"https://ha.local:8123/api/media_player_proxy/media_player.tv?cache=1a2b3c4d5e",
				"docker pull ghcr.io/home-assistant/home-assistant@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			},
		},
	}
}

func TestShapeRules(t *testing.T) {
	for _, rc := range shapeRules() {
		t.Run(rc.rule, func(t *testing.T) {
			for in, want := range rc.mask {
				if got := MaskString(in); got != want {
					t.Errorf("must mask %q:\n got %q\nwant %q", in, got, want)
				}
			}
			for _, in := range rc.keep {
				if got := MaskString(in); got != in {
					t.Errorf("must not mask %q, got %q", in, got)
				}
			}
		})
	}
}

// TestShapeFieldNames covers the names added for signed URLs, session ids and cloud credentials, and the
// names beside them that only describe a secret.
func TestShapeFieldNames(t *testing.T) {
	for _, n := range []string{"JSESSIONID", "PHPSESSID", "ASPSESSIONIDQQGGQGPA", "X-Session-Id", "sid", "connect.sid",
		"X-Oss-Signature", "X-Hub-Signature-256", "oauth_signature", "X-Oss-Credential", "AccountKey",
		"SharedAccessKey", "hdnts", "Signature", "X-Goog-Signature", "X-Amz-Security-Token", "co_api_key"} {
		if got := MaskField(n, "v4lue-0123"); got != Fixed {
			t.Errorf("MaskField(%q) = %q, want the fixed mask", n, got)
		}
	}
	for _, n := range []string{"Key-Pair-Id", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Algorithm", "signature_method",
		"oauth_signature_method", "withCredentials", "credential_id", "session_timeout", "AccountSid", "Policy",
		"Expires", "se", "sp", "sv", "sr", "GoogleAccessId"} {
		if got := MaskField(n, "v4lue-0123"); got != "v4lue-0123" {
			t.Errorf("MaskField(%q) = %q, must not mask", n, got)
		}
	}
}
