package preview

import "strings"

// Webhook URLs whose path is the secret: whoever holds the URL can post to the channel, so the path
// segments that carry the key are masked even though no single segment has a recognisable shape.

// pathRule says which path segments after a marker carry a secret on a host (a suffix match, so
// "ptb.discord.com" is Discord; "" matches any host).
type pathRule struct {
	host   string
	marker []string // consecutive segments, compared case-insensitively, after which the secret starts
	keep   int      // segments right after the marker that are ids and stay readable
	n      int      // segments masked after those; 0 masks all the rest
	// tokenLike masks only segments that look generated (long, letters and digits), so the literal
	// "IncomingWebhook" of a Teams URL and numeric hook ids of REST APIs stay readable.
	tokenLike bool
	// segPrefix, when set, masks every segment starting with it, keeping the prefix (Telegram's /bot<token>).
	segPrefix string
}

var pathRules = []pathRule{
	{host: "hooks.slack.com", marker: []string{"services"}},
	{host: "hooks.slack.com", marker: []string{"workflows"}},
	{host: "hooks.slack.com", marker: []string{"triggers"}},
	{host: "discord.com", marker: []string{"webhooks"}, keep: 1},
	{host: "discordapp.com", marker: []string{"webhooks"}, keep: 1},
	{host: "webhook.office.com", marker: []string{"webhookb2"}, tokenLike: true},
	{host: "outlook.office.com", marker: []string{"webhook"}, tokenLike: true},
	{host: "outlook.office365.com", marker: []string{"webhook"}, tokenLike: true},
	{host: "hooks.zapier.com", marker: []string{"hooks", "catch"}, keep: 1},
	{host: "maker.ifttt.com", marker: []string{"use"}, n: 1},
	{host: "maker.ifttt.com", marker: []string{"key"}, n: 1},
	{host: "api.telegram.org", segPrefix: "bot"},
	// Home Assistant: /api/webhook/<webhook_id>; the id is the only credential a webhook trigger has.
	{marker: []string{"api", "webhook"}, n: 1},
	// Mattermost, Rocket.Chat, Gitea and most self-hosted incoming webhooks.
	{marker: []string{"hooks"}, tokenLike: true},
	{marker: []string{"webhooks"}, tokenLike: true},
	{marker: []string{"webhook"}, tokenLike: true},
}

func hostMatches(host, suffix string) bool {
	return suffix == "" || host == suffix || strings.HasSuffix(host, "."+suffix)
}

// tokenLike reports whether a path segment looks generated rather than named.
func tokenLike(seg string) bool {
	if len(seg) < 16 {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(seg); i++ {
		letter = letter || seg[i] >= 'a' && seg[i] <= 'z' || seg[i] >= 'A' && seg[i] <= 'Z'
		digit = digit || isDigit(seg[i])
	}
	return letter && digit
}

// pathSecrets returns, for each segment of a URL path, the prefix to keep in front of the mask when the
// segment carries a secret, and ok[i] set for those segments.
func pathSecrets(host string, segs []string) (keep []string, ok []bool) {
	host = strings.ToLower(host)
	for _, r := range pathRules {
		if !hostMatches(host, r.host) {
			continue
		}
		for i, s := range segs {
			switch {
			case r.segPrefix != "":
				if len(s) > len(r.segPrefix) && strings.HasPrefix(s, r.segPrefix) {
					keep, ok = mark(keep, ok, len(segs), i, r.segPrefix)
				}
			case segsEqualFold(segs[i:], r.marker):
				from := i + len(r.marker) + r.keep
				to := len(segs)
				if r.n > 0 {
					to = min(to, from+r.n)
				}
				for j := from; j < to; j++ {
					if segs[j] != "" && (!r.tokenLike || tokenLike(segs[j])) {
						keep, ok = mark(keep, ok, len(segs), j, "")
					}
				}
			}
		}
	}
	return keep, ok
}

func mark(keep []string, ok []bool, n, i int, prefix string) ([]string, []bool) {
	if ok == nil {
		keep, ok = make([]string, n), make([]bool, n)
	}
	keep[i], ok[i] = prefix, true
	return keep, ok
}

func segsEqualFold(segs, marker []string) bool {
	if len(marker) == 0 || len(segs) < len(marker) {
		return false
	}
	for i, m := range marker {
		if !strings.EqualFold(segs[i], m) {
			return false
		}
	}
	return true
}

// hostOf returns the host of a URL authority: no userinfo, no port, no IPv6 brackets' port.
func hostOf(authority string) string {
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	if strings.HasPrefix(authority, "[") {
		if end := strings.IndexByte(authority, ']'); end > 0 {
			return authority[1:end]
		}
	}
	if c := strings.LastIndexByte(authority, ':'); c >= 0 {
		authority = authority[:c]
	}
	return authority
}
